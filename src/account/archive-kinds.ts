/**
 * What an account archive holds (docs/account.md): one kind of record per user-owned table, in the order an
 * import writes them (a row's references come before it), each with its merge rule; the user row's columns as the
 * `tiers`, `settings` and `account` records; and every user-owned table or column left out, with the reason.
 * test/account-archive-coverage.test.ts fails when the schema gains a user-owned table or user column that is in
 * none of these lists.
 */
import { getTableName } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { QuotaKind } from "../config/limits";
import {
  brainDocuments,
  brainEntries,
  brainProposals,
  brainVersions,
  connections,
  contextEvents,
  contextLogs,
  facts,
  lessonRecalls,
  lessons,
  memoryRuns,
  projectActivity,
  projects,
  sessions,
  sites,
  transcriptSegments,
  transcripts,
  usage,
  users,
} from "../db/schema";

/** The archive's format name and version. A new column or kind bumps the version; an import takes this one and older. */
export const ARCHIVE_FORMAT = "engram.archive";
export const ARCHIVE_VERSION = 1;

export type ArchiveTable = SQLiteTable & { id: SQLiteColumn; userId: SQLiteColumn };

/**
 * How an imported row's id is chosen. `derived`: the source id when the account already holds that row (an archive
 * of this very account), else a new id derived from the account and the source id, so a second import finds its
 * rows again. `natural`: the row is matched by what it is (see `resolveNatural` in import-ids.ts).
 */
export type Identity = "derived" | "natural";

export type TableKind = {
  kind: string;
  table: ArchiveTable;
  identity: Identity;
  /** Columns (snake_case) holding another record's id, or a JSON array of them, by that record's kind. */
  refs?: Readonly<Record<string, string>>;
  /** A row that belongs to another record: kept only when that record is newly imported. */
  parent?: { column: string; kind: string };
  /** Columns an import sets to a fixed value (what must be redone in the new account). */
  reset?: Readonly<Record<string, null | boolean>>;
  /** A JSON column a held row takes from the archive while it is empty (`{}`): what an erase cleared but kept the row of. */
  refill?: string;
  /** The plan quota its rows count against: an import that would pass it is refused whole. */
  quota?: QuotaKind;
  /** Exported only: never written by an import. */
  exportOnly?: true;
  /** The merge rule, in words (docs/account.md and the import receipt). */
  rule: string;
};

const NEW_UNLESS_HELD = "added unless already held (same source id, or imported before)";

export const TABLE_KINDS: readonly TableKind[] = [
  { kind: "site", table: sites, identity: "natural", rule: "matched by site id; a site the account has keeps its sync data" },
  {
    kind: "project",
    quota: "projects",
    table: projects,
    identity: "natural",
    rule: "matched by name (ignoring case); a project the account has absorbs the archive's",
  },
  {
    kind: "connection",
    quota: "connections",
    table: connections,
    identity: "derived",
    refill: "learned_info",
    rule: `${NEW_UNLESS_HELD}; a held connection whose learned info is empty (an erase clears it) takes the archive's`,
  },
  {
    kind: "session",
    quota: "sessions",
    table: sessions,
    identity: "derived",
    refs: { project_id: "project" },
    reset: { pending: false },
    rule: `${NEW_UNLESS_HELD}; its messages come with it; a suspended tool call is not carried over`,
  },
  {
    kind: "brain_document",
    table: brainDocuments,
    identity: "natural",
    rule: "matched by kind and site; a document the account has keeps its content and versions, the archive's are skipped",
  },
  {
    kind: "brain_version",
    table: brainVersions,
    identity: "derived",
    parent: { column: "document_id", kind: "brain_document" },
    refs: { session_id: "session" },
    rule: "imported with its document, version numbers kept",
  },
  { kind: "memory_entry", table: brainEntries, identity: "derived", refs: { project_id: "project", session_id: "session" }, rule: NEW_UNLESS_HELD },
  { kind: "proposal", table: brainProposals, identity: "derived", refs: { project_id: "project", session_id: "session" }, rule: NEW_UNLESS_HELD },
  { kind: "observation", table: contextEvents, identity: "derived", rule: `${NEW_UNLESS_HELD}; pending ones are consolidated by the next sweep` },
  {
    kind: "fact",
    quota: "facts",
    table: facts,
    identity: "derived",
    refs: { superseded_by: "fact", project_id: "project", connection_id: "connection" },
    reset: { embedded_at: null },
    rule: `${NEW_UNLESS_HELD}; supersession chains and keys kept; queued for indexing`,
  },
  {
    kind: "revision",
    table: memoryRuns,
    identity: "derived",
    refs: { event_ids: "observation" },
    rule: "imported with the tiers (only into an account whose working memory and scaffold are empty), renumbered after its latest revision, in order",
  },
  {
    kind: "project_activity",
    table: projectActivity,
    identity: "derived",
    refs: { project_id: "project", session_id: "session" },
    reset: { undo: null },
    rule: `${NEW_UNLESS_HELD}; history only: an imported action cannot be undone`,
  },
  {
    kind: "lesson",
    quota: "lessons",
    table: lessons,
    identity: "natural",
    refs: { merged_into: "lesson" },
    rule: "matched by content (the lesson's content hash in this account); an existing lesson is kept",
  },
  {
    kind: "transcript",
    quota: "transcripts",
    table: transcripts,
    identity: "natural",
    rule: "matched by Claude Code session id; a transcript the account has keeps its sync state",
  },
  {
    kind: "transcript_segment",
    table: transcriptSegments,
    identity: "derived",
    parent: { column: "transcript_id", kind: "transcript" },
    rule: "imported with its transcript",
  },
  { kind: "lesson_recall", table: lessonRecalls, identity: "derived", refs: { result_ids: "lesson" }, rule: NEW_UNLESS_HELD },
  { kind: "context_log", table: contextLogs, identity: "derived", refs: { session_id: "session" }, rule: NEW_UNLESS_HELD },
  {
    kind: "usage",
    table: usage,
    identity: "derived",
    exportOnly: true,
    rule: "exported only: billing records belong to the account that spent them",
  },
];

/** A session's stored conversation (its Durable Object), one record per message, after the session's row. */
export const MESSAGE_RULE = "imported with its session, in order (new sequence numbers)";

/** The user row, by record: the injected tiers (replaced only when the account's are empty) and the settings. */
export const TIERS_COLUMNS = {
  working_memory: users.workingMemory,
  scaffold: users.scaffold,
  scaffold_meta: users.scaffoldMeta,
  learned_info: users.learnedInfo,
};
export const TIERS_RULE = "taken only into an account whose working memory and scaffold are empty, with the revisions";

/**
 * Per-user settings. The record carries its own `version` (SETTINGS_VERSION): a new setting is one column here and
 * a version step; an archive without it leaves the account's value as it is. Version 2 adds `memory`: what the
 * assistant may remember (consent modes and never-remember rules, the memory_consent row).
 */
export const SETTINGS_COLUMNS = { review_mode: users.reviewMode };
export const SETTINGS_VERSION = 2;
export const SETTINGS_RULE = "each setting the archive holds replaces the account's";

/** Who the account is: exported for the user to see, never imported (the account importing is its own). */
export const ACCOUNT_COLUMNS = { name: users.name, email: users.email, plan: users.plan, created_at: users.createdAt };

/** User columns in no record, and why. */
export const USER_COLUMNS_LEFT_OUT: Readonly<Record<string, string>> = {
  id: "the account's own id: an import writes into the caller's account",
  updated_at: "bookkeeping, set by the import",
  shard: "which database holds the account: the server's choice (src/db/shards.ts), not the user's data",
  moving_to: "set only while an operator moves the account between databases",
  fence: "set only on the database an operator moves the account away from",
};

/** User-owned tables an archive leaves out, and why (the coverage test reads this). */
export const TABLES_LEFT_OUT: Readonly<Record<string, string>> = {
  api_keys: "secrets: key hashes never leave the server; a new account makes its own keys",
  memory_consent: "carried in the settings record as `memory` (consent modes and never-remember rules), not as rows",
  audit_logs: "the operator's record of erasures and deletions; an import must not forge it",
  chat_reservations: "transient: budget held by turns running now",
  session_erasures: "bookkeeping of an erase still destroying stored conversations",
  local_vectors: "derived from facts: imported facts are indexed again",
  local_vector_postings: "derived from facts: imported facts are indexed again",
};

export const kindByName = new Map(TABLE_KINDS.map((k) => [k.kind, k]));
export const tableNameOf = (k: TableKind) => getTableName(k.table);
