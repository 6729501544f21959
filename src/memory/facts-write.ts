/**
 * Writing facts: deterministic ids, slot-based supersession (history kept), reinforcement of facts
 * stated again, and indexing into the vector store after the D1 commit. Used by bulk import and by
 * consolidation, whose statements join the caller's atomic batch.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Statement } from "../db/batch";
import { newId } from "../db/client";
import { inJson } from "../db/in-json";
import { withinQuotaAfter } from "../db/quota";
import type { JsonObject } from "../db/schema";
import { facts, usage } from "../db/schema";
import { cleanMemoryText, SANITIZE_MAX_CHARS } from "../lib/sanitize";
import { normalizeText } from "../lib/text";
import type { MemoryDeps } from "./deps";
import { canonicalJson, uuidv5 } from "./ids";
import { briefError } from "./retrieval";
import { slotOf } from "./slots";
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
  /** Ids of existing facts this one contradicts (the consolidation model's judgement). */
  supersedes?: string[];
};

export type PreparedFact = {
  id: string;
  text: string;
  connection_id: string | null;
  project_id: string | null;
  context_type: string;
  source: string;
  confidence: number;
  slot: string | null;
  metadata: JsonObject;
  superseded_by: string | null;
  supersedes: string[];
  /** When it happened or was said (`metadata.date`), epoch ms; null: the write time. */
  event_at?: number | null;
};

/** Ids derive from the text and its scope (not provenance), so the same fact stated twice is one row. */
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
        // The assistant's echo of a statement ("Congratulations on the new job at Acme!") is not the user saying it.
        slot: f.metadata?.role === "assistant" ? null : slotOf(text),
        metadata: { ...(f.metadata ?? {}), ...scope, source },
        superseded_by: null,
        supersedes: f.supersedes ?? [],
        event_at: eventTime(f.metadata?.date),
      };
    }),
  );
  // Within one batch, the latest statement of a slot wins (by event time, then by position); earlier ones become its history.
  const byId = new Map(prepared.map((p) => [p.id, p]));
  const latestBySlot = new Map<string, PreparedFact>();
  const keyOf = (p: PreparedFact) => (p.slot ? canonicalJson([p.slot, p.connection_id, p.project_id]) : null);
  for (const p of byId.values()) {
    const key = keyOf(p);
    const held = key ? latestBySlot.get(key) : undefined;
    if (key && (!held || (p.event_at ?? Infinity) >= (held.event_at ?? Infinity))) latestBySlot.set(key, p);
  }
  return [...byId.values()].map((p) => {
    const key = keyOf(p);
    const winner = key ? latestBySlot.get(key)?.id : undefined;
    return winner && winner !== p.id ? { ...p, superseded_by: winner } : p;
  });
}

/** The facts quota's guard (history included): see `withinQuotaAfter`. */
export const withinFactQuota = (userId: string, ids: readonly string[], limit: number) => withinQuotaAfter(facts.id, facts.userId, userId, ids, limit);

/**
 * Statements that upsert the facts and supersede what they contradict. `RETURNING id` statements name
 * the facts that were superseded, whose vectors the caller removes after the commit. With `maxFacts`
 * every statement is guarded by the quota, so the batch is written whole or not at all. A fact scoped to a
 * connection that is no longer the user's when the batch runs (deleted during a consolidation's model call,
 * or an import's checks) is not written, and supersedes nothing.
 */
export function factStatements(
  deps: MemoryDeps,
  userId: string,
  prepared: readonly PreparedFact[],
  maxFacts?: number,
): { statements: Statement[]; supersedingAt: number[] } {
  if (!prepared.length) return { statements: [], supersedingAt: [] };
  const now = deps.now();
  const ids = prepared.map((p) => p.id);
  const quota = maxFacts === undefined ? sql`true` : withinFactQuota(userId, ids, maxFacts);
  const connectionHeld = sql`(value->>'connection_id' IS NULL OR EXISTS (SELECT 1 FROM connections c WHERE c.id = value->>'connection_id' AND c.user_id = ${userId}))`;
  const winners = prepared.filter((p) => p.slot && !p.superseded_by).map((p) => [p.id, p.slot, p.connection_id, p.project_id, p.event_at ?? now]);
  const statements: Statement[] = [
    sql`INSERT INTO facts (id, user_id, text, metadata, connection_id, context_type, source, project_id, confidence, slot, superseded_by, event_at, created_at)
      SELECT value->>'id', ${userId}, value->>'text', value->'metadata', value->>'connection_id', value->>'context_type', value->>'source',
        value->>'project_id', value->>'confidence', value->>'slot', value->>'superseded_by', coalesce(value->>'event_at', ${now}), ${now}
      FROM json_each(${JSON.stringify(prepared)}) WHERE ${connectionHeld} AND ${quota}
      ON CONFLICT(id) DO UPDATE SET
        confidence = min(0.99, max(facts.confidence, excluded.confidence) + (1 - max(facts.confidence, excluded.confidence)) * 0.25),
        metadata = json_set(json_patch(facts.metadata, excluded.metadata), '$.connection_id', excluded.connection_id, '$.project_id', excluded.project_id),
        embedded_at = CASE WHEN facts.superseded_by IS NULL THEN facts.embedded_at ELSE NULL END,
        event_at = max(coalesce(facts.event_at, facts.created_at), excluded.event_at),
        superseded_by = excluded.superseded_by
      WHERE facts.user_id = excluded.user_id`,
  ];
  const supersedingAt: number[] = [];
  if (winners.length) {
    const w = JSON.stringify(winners);
    // Only what happened earlier is superseded: an import of older history does not override a newer statement.
    const sameSlot = sql`j.value->>1 = facts.slot AND j.value->>2 IS facts.connection_id AND j.value->>3 IS facts.project_id AND coalesce(facts.event_at, facts.created_at) <= j.value->>4`;
    supersedingAt.push(statements.length);
    statements.push(
      sql`UPDATE facts SET superseded_by = (SELECT j.value->>0 FROM json_each(${w}) j WHERE ${sameSlot})
        WHERE user_id = ${userId} AND superseded_by IS NULL AND slot IN (SELECT value->>1 FROM json_each(${w}))
          AND NOT ${inJson(facts.id, ids)} AND EXISTS (SELECT 1 FROM json_each(${w}) j WHERE ${sameSlot}) AND ${quota}
        RETURNING id`,
    );
    // ...and a new statement older than a live one of the same slot becomes that one's history at once.
    const newer = sql`SELECT n.id FROM facts n WHERE n.user_id = facts.user_id AND n.slot = facts.slot AND n.connection_id IS facts.connection_id
      AND n.project_id IS facts.project_id AND n.superseded_by IS NULL AND n.id <> facts.id AND coalesce(n.event_at, n.created_at) > coalesce(facts.event_at, facts.created_at)
      ORDER BY n.event_at DESC LIMIT 1`;
    supersedingAt.push(statements.length);
    statements.push(
      sql`UPDATE facts SET superseded_by = (${newer})
        WHERE user_id = ${userId} AND superseded_by IS NULL AND ${inJson(
          facts.id,
          winners.map((x) => String(x[0])),
        )} AND EXISTS (${newer}) AND ${quota}
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
        WHERE user_id = ${userId} AND superseded_by IS NULL AND ${inJson(facts.id, p.supersedes)} AND NOT ${inJson(facts.id, ids)} AND ${stored} AND ${quota}
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
