/**
 * Writing facts: deterministic ids, supersession by key or by id (history kept), reinforcement of facts stated
 * again, and indexing into the vector store after the D1 commit. Used by bulk import, corrections and
 * consolidation, whose statements join the caller's atomic batch. Which fact replaces which is decided by whoever
 * knows (the consolidation model, the API caller): a key they named (fact-key.ts) or ids they listed. Nothing here
 * reads meaning into a fact's text.
 */
import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { Statement } from "../db/batch";
import { newId } from "../db/client";
import { inJson } from "../db/in-json";
import { withinQuotaAfter } from "../db/quota";
import type { JsonObject } from "../db/schema";
import { facts, usage } from "../db/schema";
import { cleanMemoryText, SANITIZE_MAX_CHARS } from "../lib/sanitize";
import { normalizeText } from "../lib/text";
import { cleanJson } from "./clean";
import type { MemoryDeps } from "./deps";
import { cleanFactKey } from "./fact-key";
import { canonicalJson, uuidv5 } from "./ids";
import { briefError } from "./retrieval";
import type { VectorMetadata } from "./vector";
import { eventTime } from "./when";

export type FactInput = {
  text: string;
  connectionId?: string | null;
  projectId?: string | null;
  contextType?: string;
  source?: string;
  confidence?: number;
  /** Provenance and anything else the caller knows (message_id, session_id, event_ids, ...). */
  metadata?: JsonObject;
  /** The changing attribute it states ("user.home_city"), as the model or the caller named it (fact-key.ts). */
  key?: string | null;
  /** Ids of existing facts this one contradicts (the model's or the caller's judgement). */
  supersedes?: string[];
  /** Its event time when `metadata.date` gives none (a correction keeps the corrected fact's), epoch ms. */
  eventAt?: number | null;
};

export type PreparedFact = {
  id: string;
  text: string;
  connection_id: string | null;
  project_id: string | null;
  context_type: string;
  source: string;
  confidence: number;
  key: string | null;
  metadata: JsonObject;
  superseded_by: string | null;
  supersedes: string[];
  /** When it happened or was said (`metadata.date`), epoch ms; null: the write time. */
  event_at?: number | null;
};

/** Ids derive from the text and its scope (not provenance, not the key), so the same fact stated twice is one row. */
export async function prepareFacts(userId: string, inputs: readonly FactInput[]): Promise<PreparedFact[]> {
  const prepared = await Promise.all(
    inputs.map(async (f): Promise<PreparedFact> => {
      const text = normalizeText(cleanMemoryText(f.text, SANITIZE_MAX_CHARS, "fact text"));
      const scope = {
        user_id: userId,
        connection_id: f.connectionId ?? null,
        context_type: f.contextType ?? "user_persistent",
        project_id: f.projectId ?? null,
      };
      const source = f.source ?? "user_provided";
      return {
        id: await uuidv5(canonicalJson({ text, ...scope })),
        text,
        connection_id: scope.connection_id,
        project_id: scope.project_id,
        context_type: scope.context_type,
        source,
        confidence: Math.min(1, Math.max(0, f.confidence ?? 0.7)),
        key: cleanFactKey(f.key),
        // Metadata reaches the consolidation model and the client like the text: cleaned the same way.
        metadata: { ...(cleanJson(f.metadata ?? {}) as JsonObject), ...scope, source },
        superseded_by: null,
        supersedes: f.supersedes ?? [],
        event_at: eventTime(f.metadata?.date) ?? f.eventAt ?? null,
      };
    }),
  );
  // Within one batch, the latest statement of a key wins (by event time, then by position); earlier ones become its history.
  const byId = new Map(prepared.map((p) => [p.id, p]));
  const latestByKey = new Map<string, PreparedFact>();
  const scopedKey = (p: PreparedFact) => (p.key ? canonicalJson([p.key, p.connection_id, p.project_id]) : null);
  for (const p of byId.values()) {
    const k = scopedKey(p);
    const held = k ? latestByKey.get(k) : undefined;
    if (k && (!held || (p.event_at ?? Infinity) >= (held.event_at ?? Infinity))) latestByKey.set(k, p);
  }
  return [...byId.values()].map((p) => {
    const k = scopedKey(p);
    const winner = k ? latestByKey.get(k)?.id : undefined;
    return winner && winner !== p.id ? { ...p, superseded_by: winner } : p;
  });
}

/** The facts quota's guard (history included): see `withinQuotaAfter`. */
export const withinFactQuota = (userId: string, ids: readonly string[], limit: number) => withinQuotaAfter(facts.id, facts.userId, userId, ids, limit);

export type WriteGuard = {
  /** The plan's cap on stored facts: every statement is guarded by it, so the batch is written whole or not at all. */
  maxFacts?: number;
  /** A condition every statement also requires; the batch must leave its value unchanged (as the quota's). */
  requires?: SQL;
};

/**
 * Statements that upsert the facts and supersede what they replace: the older live facts of the user with the same
 * key and scope (connection, project) whose event time is not later, and the facts each one names in `supersedes`.
 * A new fact older than a live one of its key becomes that one's history at once. `RETURNING id` statements name the
 * facts that were superseded, whose vectors the caller removes after the commit. A fact scoped to a connection that
 * is no longer the user's when the batch runs (deleted during a consolidation's model call, or an import's checks)
 * is not written, and supersedes nothing.
 */
export function factStatements(
  deps: MemoryDeps,
  userId: string,
  prepared: readonly PreparedFact[],
  guard: WriteGuard = {},
): { statements: Statement[]; supersedingAt: number[] } {
  if (!prepared.length) return { statements: [], supersedingAt: [] };
  const now = deps.now();
  const ids = prepared.map((p) => p.id);
  const quota = guard.maxFacts === undefined ? sql`true` : withinFactQuota(userId, ids, guard.maxFacts);
  const held = guard.requires ? sql`(${quota} AND ${guard.requires})` : quota;
  const connectionHeld = sql`(value->>'connection_id' IS NULL
    OR EXISTS (SELECT 1 FROM connections c WHERE c.id = value->>'connection_id' AND c.user_id = ${userId}))`;
  const statements: Statement[] = [
    // A fact stated again keeps the key it had unless this statement names one.
    sql`INSERT INTO facts (id, user_id, text, metadata, connection_id, context_type, source, project_id, confidence, key, superseded_by, event_at, created_at)
      SELECT value->>'id', ${userId}, value->>'text', value->'metadata', value->>'connection_id', value->>'context_type', value->>'source',
        value->>'project_id', value->>'confidence', value->>'key', value->>'superseded_by', coalesce(value->>'event_at', ${now}), ${now}
      FROM json_each(${JSON.stringify(prepared)}) WHERE ${connectionHeld} AND ${held}
      ON CONFLICT(id) DO UPDATE SET
        confidence = min(0.99, max(facts.confidence, excluded.confidence) + (1 - max(facts.confidence, excluded.confidence)) * 0.25),
        metadata = json_set(json_patch(facts.metadata, excluded.metadata), '$.connection_id', excluded.connection_id, '$.project_id', excluded.project_id),
        key = coalesce(excluded.key, facts.key),
        embedded_at = CASE WHEN facts.superseded_by IS NULL THEN facts.embedded_at ELSE NULL END,
        event_at = max(coalesce(facts.event_at, facts.created_at), excluded.event_at),
        superseded_by = excluded.superseded_by
      WHERE facts.user_id = excluded.user_id`,
  ];
  const supersedingAt: number[] = [];
  // The batch's live facts as stored (with the key a restated fact kept): only what the batch wrote replaces anything.
  const winners = JSON.stringify(prepared.filter((p) => !p.superseded_by).map((p) => p.id));
  if (winners !== "[]") {
    // Only what happened earlier is superseded: an import of older history does not override a newer statement.
    const sameKey = sql`w.user_id = ${userId} AND w.id IN (SELECT value FROM json_each(${winners})) AND w.superseded_by IS NULL
      AND w.key = facts.key AND w.connection_id IS facts.connection_id AND w.project_id IS facts.project_id
      AND coalesce(facts.event_at, facts.created_at) <= coalesce(w.event_at, w.created_at)`;
    supersedingAt.push(statements.length);
    statements.push(
      sql`UPDATE facts SET superseded_by = (SELECT w.id FROM facts w WHERE ${sameKey} ORDER BY coalesce(w.event_at, w.created_at) DESC, w.id LIMIT 1)
        WHERE user_id = ${userId} AND superseded_by IS NULL
          AND key IN (SELECT w.key FROM facts w WHERE w.user_id = ${userId} AND w.id IN (SELECT value FROM json_each(${winners})))
          AND NOT ${inJson(facts.id, ids)} AND EXISTS (SELECT 1 FROM facts w WHERE ${sameKey}) AND ${held}
        RETURNING id`,
    );
    // ...and a new statement older than a live one of the same key becomes that one's history at once.
    const newer = sql`SELECT n.id FROM facts n WHERE n.user_id = facts.user_id AND n.key = facts.key AND n.connection_id IS facts.connection_id
      AND n.project_id IS facts.project_id AND n.superseded_by IS NULL AND n.id <> facts.id
      AND coalesce(n.event_at, n.created_at) > coalesce(facts.event_at, facts.created_at)
      ORDER BY coalesce(n.event_at, n.created_at) DESC LIMIT 1`;
    supersedingAt.push(statements.length);
    statements.push(
      sql`UPDATE facts SET superseded_by = (${newer})
        WHERE user_id = ${userId} AND superseded_by IS NULL AND key IS NOT NULL AND id IN (SELECT value FROM json_each(${winners}))
          AND EXISTS (${newer}) AND ${held}
        RETURNING id`,
    );
  }
  for (const p of prepared) {
    if (!p.supersedes.length || p.superseded_by) continue;
    supersedingAt.push(statements.length);
    // Only by a fact the batch stored: one whose connection went meanwhile leaves what it contradicts current.
    const stored = sql`EXISTS (SELECT 1 FROM facts s WHERE s.id = ${p.id} AND s.user_id = ${userId})`;
    statements.push(
      sql`UPDATE facts SET superseded_by = ${p.id}
        WHERE user_id = ${userId} AND superseded_by IS NULL AND ${inJson(facts.id, p.supersedes)} AND NOT ${inJson(facts.id, ids)} AND ${stored} AND ${held}
        RETURNING id`,
    );
  }
  return { statements, supersedingAt };
}

const vectorMetadata = (p: PreparedFact): VectorMetadata => {
  const out: VectorMetadata = { context_type: p.context_type, source: p.source };
  if (p.connection_id) out.connection_id = p.connection_id;
  if (p.project_id) out.project_id = p.project_id;
  const messageId = p.metadata.message_id;
  if (typeof messageId === "string") out.message_id = messageId;
  return out;
};

/** A stored live fact as the indexer takes it, to index it again (the sweep, an import). */
export const storedFact = (f: typeof facts.$inferSelect): PreparedFact => ({
  id: f.id,
  text: f.text,
  connection_id: f.connectionId,
  project_id: f.projectId,
  context_type: f.contextType,
  source: f.source,
  confidence: f.confidence,
  key: f.key,
  metadata: f.metadata,
  superseded_by: null,
  supersedes: [],
});

/**
 * After the commit: embed the live facts, upsert their vectors, drop the vectors of superseded ones, and of
 * those no longer stored and live once their vectors are written. A failing embedder or index leaves
 * `embedded_at` null for the sweep; the facts are already searchable by text.
 */
export async function indexFacts(
  deps: MemoryDeps,
  userId: string,
  prepared: readonly PreparedFact[],
  superseded: readonly string[],
): Promise<{ embedded: number; error?: string }> {
  const gone = new Set(superseded);
  const live = prepared.filter((p) => !p.superseded_by && !gone.has(p.id));
  try {
    if (superseded.length) await deps.vectors.delete(userId, [...superseded]);
    if (!live.length) return { embedded: 0 };
    const { vectors, tokens } = await deps.embedder.embed(live.map((p) => p.text));
    await deps.vectors.upsert(live.map((p, i) => ({ id: p.id, userId, vector: vectors[i] ?? { indices: [], values: [] }, metadata: vectorMetadata(p) })));
    const [marked] = await deps.db.batch([
      deps.db
        .update(facts)
        .set({ embeddedAt: deps.now() })
        .where(
          and(
            eq(facts.userId, userId),
            inJson(
              facts.id,
              live.map((p) => p.id),
            ),
            isNull(facts.supersededBy),
          ),
        )
        .returning({ id: facts.id }),
      deps.db.insert(usage).values({ id: newId("use"), userId, kind: "embedding", model: deps.embedder.model, inputTokens: tokens, outputTokens: 0 }),
    ]);
    // A fact forgotten, erased or replaced while it was embedded had its vector removed before this upsert wrote it
    // again: it goes now.
    const kept = new Set(marked.map((r) => r.id));
    const dropped = live.flatMap((p) => (kept.has(p.id) ? [] : [p.id]));
    if (dropped.length) await deps.vectors.delete(userId, dropped);
    return { embedded: kept.size };
  } catch (err) {
    const error = briefError(err);
    console.error(JSON.stringify({ memory: "index_facts", user: userId, error }));
    return { embedded: 0, error };
  }
}
