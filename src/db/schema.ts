/**
 * The D1 data model of every capability. Times are epoch milliseconds; JSON columns hold JSON values.
 * Every user-owned row carries `user_id`, and every query filters by it.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = () => sql`(unixepoch('subsec') * 1000)`;
const createdAt = () => integer("created_at").notNull().default(now());

/** Plans set per-user limits (brain document length, MEMORY entries, budgets). */
export const PLANS = ["free", "pro"] as const;
export type Plan = (typeof PLANS)[number];

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  name: text("name"),
  email: text("email"),
  plan: text("plan", { enum: PLANS }).notNull().default("free"),
  reviewMode: integer("review_mode", { mode: "boolean" }).notNull().default(false),
  workingMemory: text("working_memory").notNull().default(""),
  scaffold: text("scaffold", { mode: "json" }).$type<JsonObject>().notNull().default(sql`'{}'`),
  learnedInfo: text("learned_info", { mode: "json" }).$type<JsonObject>().notNull().default(sql`'{}'`),
  /** Per top-level scaffold key: confidence and when it last changed. */
  scaffoldMeta: text("scaffold_meta", { mode: "json" }).$type<ScaffoldMeta>().notNull().default(sql`'{}'`),
  createdAt: createdAt(),
  updatedAt: integer("updated_at").notNull().default(now()),
  /**
   * Directory columns (src/db/shards.ts), meaningful in the directory database only: the shard that holds the
   * user's rows, and while an admin moves them, the shard they are moving to (their writes pause meanwhile).
   */
  shard: integer("shard").notNull().default(0),
  movingTo: integer("moving_to"),
  /**
   * Shard column (src/account/move.ts): set on the database a move takes the user away from, where triggers then
   * refuse their writes (1: every write, while the copy runs; 2: inserts and updates, once the rows are copied).
   */
  fence: integer("fence"),
});

/** A scaffold key's entry: how sure memory is of it, when it last changed, and `by: "user"` when the user set it themselves. */
export type ScaffoldKeyMeta = { confidence: number; updated_at: number; by?: "user" };
/** A key the user removed: absent from the scaffold, remembered here so that observations made before the removal cannot put it back. */
export type ScaffoldTombstone = { removed: true; by: "user"; updated_at: number };
/** Per top-level scaffold key, present or removed by the user. */
export type ScaffoldMeta = { [key: string]: ScaffoldKeyMeta | ScaffoldTombstone };

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name"),
    prefix: text("prefix").notNull(),
    hash: text("hash").notNull(),
    createdAt: createdAt(),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash").on(t.hash), index("api_keys_user").on(t.userId)],
);

export const sites = sqliteTable(
  "sites",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    id: text("id").notNull(),
    name: text("name"),
    syncData: text("sync_data", { mode: "json" }).$type<JsonObject>(),
    syncedAt: integer("synced_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("sites_pk").on(t.userId, t.id)],
);

/** SOUL (per user), BIBLE and HEARTBEAT (per user and site). `site` is '' for SOUL. */
export const brainDocuments = sqliteTable(
  "brain_documents",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["soul", "bible", "heartbeat"] }).notNull(),
    site: text("site").notNull().default(""),
    content: text("content").notNull(),
    version: integer("version").notNull().default(1),
    stale: integer("stale", { mode: "boolean" }).notNull().default(false),
    updatedAt: integer("updated_at").notNull().default(now()),
  },
  (t) => [uniqueIndex("brain_documents_key").on(t.userId, t.kind, t.site)],
);

export const brainVersions = sqliteTable(
  "brain_versions",
  {
    id: text("id").primaryKey(),
    documentId: text("document_id")
      .notNull()
      .references(() => brainDocuments.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    version: integer("version").notNull(),
    content: text("content").notNull(),
    author: text("author", { enum: ["assistant", "user", "system"] }).notNull(),
    sessionId: text("session_id"),
    truncated: integer("truncated", { mode: "boolean" }).notNull().default(false),
    note: text("note"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("brain_versions_doc_version").on(t.documentId, t.version)],
);

/** MEMORY entries (collection 'memory', tenant = user). */
export const brainEntries = sqliteTable(
  "brain_entries",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    collection: text("collection").notNull().default("memory"),
    site: text("site"),
    projectId: text("project_id"),
    content: text("content").notNull(),
    author: text("author", { enum: ["assistant", "user", "system"] }).notNull(),
    sessionId: text("session_id"),
    createdAt: createdAt(),
  },
  (t) => [index("brain_entries_user").on(t.userId, t.collection, t.createdAt)],
);

/** Review mode: assistant writes wait here for the user's decision. */
export const brainProposals = sqliteTable(
  "brain_proposals",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    target: text("target", { enum: ["soul", "bible", "memory"] }).notNull(),
    site: text("site"),
    projectId: text("project_id"),
    content: text("content").notNull(),
    baseVersion: integer("base_version"),
    status: text("status", { enum: ["pending", "approved", "rejected"] })
      .notNull()
      .default("pending"),
    sessionId: text("session_id"),
    createdAt: createdAt(),
    decidedAt: integer("decided_at"),
  },
  (t) => [index("brain_proposals_user").on(t.userId, t.status)],
);

export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    title: text("title"),
    siteId: text("site_id"),
    projectId: text("project_id"),
    messageCount: integer("message_count").notNull().default(0),
    pending: integer("pending", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull().default(now()),
  },
  (t) => [index("sessions_user").on(t.userId, t.updatedAt)],
);

/**
 * Session objects an erase has still to destroy: their rows are gone, the conversations stored in their Durable
 * Objects not yet. A row goes once its object confirms. No foreign key to `users`: deleting the account must not
 * drop what is still owed.
 */
export const sessionErasures = sqliteTable(
  "session_erasures",
  {
    userId: text("user_id").notNull(),
    sessionId: text("session_id").notNull(),
    /** The session's last activity: the most recent ones go first, a turn may still be running in them. */
    lastActiveAt: integer("last_active_at").notNull(),
    requestedAt: integer("requested_at").notNull(),
    /** When a call to its object was last started (null: none yet); the sweep takes the untried first, then the longest-waiting. */
    triedAt: integer("tried_at"),
    attempts: integer("attempts").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.sessionId] }), index("session_erasures_due").on(t.triedAt, t.requestedAt)],
);

/** The observation event bus: observation -> row (processed = false) -> queue message. */
export const contextEvents = sqliteTable(
  "context_events",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    eventType: text("event_type").notNull(),
    content: text("content").notNull(),
    sourceMetadata: text("source_metadata", { mode: "json" }).$type<JsonObject>().notNull().default(sql`'{}'`),
    status: text("status", { enum: ["pending", "processed", "failed", "deferred"] })
      .notNull()
      .default("pending"),
    processed: integer("processed", { mode: "boolean" }).notNull().default(false),
    attempts: integer("attempts").notNull().default(0),
    error: text("error"),
    idempotencyKey: text("idempotency_key"),
    /** SHA-256 of the whole request its idempotency key came with (every observation of it, cleaned). */
    idempotencyBody: text("idempotency_body"),
    createdAt: createdAt(),
    processedAt: integer("processed_at"),
  },
  (t) => [
    index("context_events_pending").on(t.processed, t.createdAt),
    index("context_events_user").on(t.userId, t.createdAt),
    uniqueIndex("context_events_idem").on(t.userId, t.idempotencyKey),
  ],
);

/** Long-term facts; full text lives in the `facts_fts` FTS5 table (custom migration). */
export const facts = sqliteTable(
  "facts",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    text: text("text").notNull(),
    metadata: text("metadata", { mode: "json" }).$type<JsonObject>().notNull().default(sql`'{}'`),
    connectionId: text("connection_id"),
    contextType: text("context_type").notNull().default("user_persistent"),
    source: text("source").notNull().default("user_provided"),
    projectId: text("project_id"),
    confidence: real("confidence").notNull().default(0.7),
    supersededBy: text("superseded_by"),
    recallCount: integer("recall_count").notNull().default(0),
    lastRecalledAt: integer("last_recalled_at"),
    /**
     * The changing single-valued attribute the fact states, subject included ("user.home_city", "sister.employer"),
     * as the consolidation model or the API caller named it; null when none was named. A newer live fact with the
     * same key and scope supersedes it (src/memory/facts-write.ts).
     */
    key: text("key"),
    /** When its vector reached the index; null until then (a sweep retries). */
    embeddedAt: integer("embedded_at"),
    /** When what it says happened or was said (epoch ms): `metadata.date` when the writer gave one, else the write time. */
    eventAt: integer("event_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("facts_user").on(t.userId, t.supersededBy),
    index("facts_key").on(t.userId, t.key),
    index("facts_unembedded").on(t.embeddedAt, t.createdAt),
    index("facts_event").on(t.userId, t.eventAt),
  ],
);

/** The local vector index (offline stand-in for Vectorize): one row per vector. */
export const localVectors = sqliteTable(
  "local_vectors",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    /** Sparse: the nonzero dimensions and their values. */
    values: text("vector_values", { mode: "json" }).$type<{ indices: number[]; values: number[] }>().notNull(),
    metadata: text("metadata", { mode: "json" }).$type<JsonObject>().notNull().default(sql`'{}'`),
  },
  (t) => [index("local_vectors_user").on(t.userId)],
);

/**
 * The local index's inverted layout: one row per nonzero dimension of each vector. A query reads only
 * the rows of its own nonzero dimensions, so a 10k-vector user costs a few thousand index rows, not 10k vectors.
 */
export const localVectorPostings = sqliteTable(
  "local_vector_postings",
  {
    userId: text("user_id").notNull(),
    dim: integer("dim").notNull(),
    vectorId: text("vector_id").notNull(),
    weight: real("weight").notNull(),
  },
  (t) => [index("local_vector_postings_lookup").on(t.userId, t.dim, t.weight, t.vectorId), index("local_vector_postings_vector").on(t.vectorId)],
);

/**
 * One row per change to a user's consolidated memory. `(user_id, rev)` is unique: two consolidations
 * based on the same revision cannot both commit, so a batch is never applied twice. Each row keeps the two
 * injected tiers as they stood after it (its snapshot, which a restore puts back); rows written before
 * snapshots were kept have null there.
 */
export const memoryRuns = sqliteTable(
  "memory_runs",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    rev: integer("rev").notNull(),
    kind: text("kind", { enum: ["consolidation", "erase", "edit", "restore"] }).notNull(),
    eventIds: text("event_ids", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    summary: text("summary", { mode: "json" }).$type<JsonObject>().notNull().default(sql`'{}'`),
    model: text("model"),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    workingMemory: text("working_memory"),
    scaffold: text("scaffold", { mode: "json" }).$type<JsonObject>(),
    scaffoldMeta: text("scaffold_meta", { mode: "json" }).$type<ScaffoldMeta>(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("memory_runs_rev").on(t.userId, t.rev)],
);

export const connections = sqliteTable(
  "connections",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    active: integer("active", { mode: "boolean" }).notNull().default(true),
    learnedInfo: text("learned_info", { mode: "json" }).$type<JsonObject>().notNull().default(sql`'{}'`),
    createdAt: createdAt(),
  },
  (t) => [index("connections_user").on(t.userId)],
);

export const projects = sqliteTable(
  "projects",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    createdBy: text("created_by", { enum: ["user", "assistant"] }).notNull(),
    reason: text("reason"),
    archivedAt: integer("archived_at"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull().default(now()),
  },
  // Names are unique per user, ignoring case, archived projects included (an archived name is still taken).
  (t) => [index("projects_user").on(t.userId), uniqueIndex("projects_user_name").on(t.userId, sql`lower(${t.name})`)],
);

export const PROJECT_ACTIONS = [
  "create",
  "rename",
  "describe",
  "archive",
  "unarchive",
  "merge",
  "delete",
  "move_memory",
  "scope_memory",
  "suggest_memory",
] as const;
export type ProjectAction = (typeof PROJECT_ACTIONS)[number];

/**
 * Every change to a user's projects, by the assistant or the user, with what undoing it needs (`undo`,
 * written by the projects module and read only by it). `undone_at` makes an undo one-shot.
 */
export const projectActivity = sqliteTable(
  "project_activity",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    projectId: text("project_id"),
    action: text("action", { enum: PROJECT_ACTIONS }).notNull(),
    actor: text("actor", { enum: ["assistant", "user"] }).notNull(),
    reason: text("reason"),
    summary: text("summary").notNull(),
    detail: text("detail", { mode: "json" }).$type<JsonObject>().notNull().default(sql`'{}'`),
    undo: text("undo", { mode: "json" }).$type<JsonObject>(),
    sessionId: text("session_id"),
    undoneAt: integer("undone_at"),
    createdAt: createdAt(),
  },
  (t) => [index("project_activity_user").on(t.userId, t.createdAt)],
);

/**
 * Coding lessons; content-hash ids (user, project, type, normalised text) make re-extraction idempotent.
 * Full text in `lessons_fts` (title, content, tags; every word tagged with its owner, so a search reads only its
 * user's postings).
 */
export const lessons = sqliteTable(
  "lessons",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    type: text("type", { enum: ["lesson", "antipattern", "decision", "pattern", "snippet"] }).notNull(),
    signal: text("signal", { enum: ["HIGH", "MED", "LOW"] })
      .notNull()
      .default("MED"),
    flags: text("flags", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    title: text("title").notNull().default(""),
    content: text("content").notNull(),
    tags: text("tags", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    project: text("project"),
    sourceSession: text("source_session"),
    /** How it was made: extracted by the model, a `#cor` marker kept verbatim, or remembered by a client. */
    origin: text("origin", { enum: ["extracted", "cor", "remembered"] })
      .notNull()
      .default("extracted"),
    unlearned: integer("unlearned", { mode: "boolean" }).notNull().default(false),
    /** Set when `compact` folded this lesson into another. */
    mergedInto: text("merged_into"),
    /** Times a recalled lesson showed up again in a later transcript. */
    confirmations: integer("confirmations").notNull().default(0),
    recalls: integer("recalls").notNull().default(0),
    lastRecalledAt: integer("last_recalled_at"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull().default(now()),
  },
  (t) => [index("lessons_user").on(t.userId, t.unlearned), index("lessons_user_created").on(t.userId, t.createdAt)],
);

/** Sync state of one Claude Code session's transcript. Synced only once extraction has succeeded. */
export const transcripts = sqliteTable(
  "transcripts",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull(),
    project: text("project"),
    /** Bytes of the local file received so far: the next upload starts here. */
    bytesReceived: integer("bytes_received").notNull().default(0),
    /** Bytes whose lessons are extracted and stored (the `last_synced_bytes` of the API). */
    bytesSynced: integer("bytes_synced").notNull().default(0),
    totalBytes: integer("total_bytes").notNull().default(0),
    /** SHA-256 chained over every received upload, and of the last one (replays are recognised). */
    contentHash: text("content_hash").notNull().default(""),
    lastChunkHash: text("last_chunk_hash").notNull().default(""),
    status: text("status", { enum: ["pending", "synced", "failed"] })
      .notNull()
      .default("pending"),
    attempts: integer("attempts").notNull().default(0),
    error: text("error"),
    lessonsExtracted: integer("lessons_extracted").notNull().default(0),
    entriesDropped: integer("entries_dropped").notNull().default(0),
    syncedAt: integer("synced_at"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull().default(now()),
  },
  (t) => [uniqueIndex("transcripts_session").on(t.userId, t.sessionId), index("transcripts_user_updated").on(t.userId, t.updatedAt)],
);

/** A received part of a transcript, already parsed to compact events and redacted; dropped once extracted. */
export const transcriptSegments = sqliteTable(
  "transcript_segments",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    transcriptId: text("transcript_id")
      .notNull()
      .references(() => transcripts.id, { onDelete: "cascade" }),
    startByte: integer("start_byte").notNull(),
    endByte: integer("end_byte").notNull(),
    events: text("events", { mode: "json" }).$type<Json[]>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("transcript_segments_transcript").on(t.transcriptId, t.startByte)],
);

/** Every recall (HTTP search or MCP brain_recall): what was asked, by which client, what came back. */
export const lessonRecalls = sqliteTable(
  "lesson_recalls",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    query: text("query").notNull(),
    client: text("client").notNull(),
    project: text("project"),
    resultIds: text("result_ids", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("lesson_recalls_user").on(t.userId, t.createdAt)],
);

/** What was injected into each chat turn, by id. */
/** What the assistant may remember, per kind of memory (src/consent/settings.ts); no row: every kind `auto`, nothing withheld. */
export const MEMORY_KINDS = ["brain", "memory", "facts", "lessons"] as const;
export const CONSENT_MODES = ["auto", "ask", "off"] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];
export type ConsentMode = (typeof CONSENT_MODES)[number];
export type SensitiveRule = { kind: "pattern" | "topic"; text: string };

export const memoryConsent = sqliteTable("memory_consent", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  modes: text("modes", { mode: "json" }).$type<Record<MemoryKind, ConsentMode>>().notNull(),
  sensitive: text("sensitive", { mode: "json" }).$type<SensitiveRule[]>().notNull().default(sql`'[]'`),
  updatedAt: integer("updated_at").notNull().default(now()),
});

export const contextLogs = sqliteTable(
  "context_logs",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id"),
    injected: text("injected", { mode: "json" }).$type<JsonObject>().notNull(),
    createdAt: createdAt(),
  },
  // By time alone for retention (src/chat/retention.ts): expired rows are found without reading the others.
  (t) => [index("context_logs_user").on(t.userId, t.createdAt), index("context_logs_created").on(t.createdAt)],
);

export const auditLogs = sqliteTable(
  "audit_logs",
  {
    id: text("id").primaryKey(),
    userId: text("user_id"),
    action: text("action").notNull(),
    target: text("target"),
    detail: text("detail", { mode: "json" }).$type<JsonObject>().notNull().default(sql`'{}'`),
    requestId: text("request_id"),
    createdAt: createdAt(),
  },
  (t) => [index("audit_logs_user").on(t.userId, t.createdAt)],
);

export const usage = sqliteTable(
  "usage",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["chat", "consolidation", "embedding", "extraction", "extraction_on_demand", "rerank", "summary"] }).notNull(),
    model: text("model"),
    /** Uncached input tokens; cache reads and writes are counted apart, as the API reports them. */
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    cacheReadTokens: integer("cache_read_tokens").notNull().default(0),
    cacheCreationTokens: integer("cache_creation_tokens").notNull().default(0),
    /** Estimated from the model's prices when the row was written (USD). */
    costUsd: real("cost_usd").notNull().default(0),
    sessionId: text("session_id"),
    createdAt: createdAt(),
  },
  (t) => [index("usage_user").on(t.userId, t.kind, t.createdAt), index("usage_session").on(t.userId, t.sessionId, t.createdAt)],
);

/**
 * Chat tokens running turns hold of their user's daily budget (usage/reservation.ts), counted with the usage rows
 * when a turn reserves room for its next model call. A turn deletes its row when it writes its usage; one a crash
 * left behind stops counting at `expires_at`.
 */
export const chatReservations = sqliteTable(
  "chat_reservations",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull(),
    /** What the turn has spent so far (not yet in `usage`), its next call's input and that call's output limit. */
    tokens: integer("tokens").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("chat_reservations_user").on(t.userId, t.expiresAt)],
);
