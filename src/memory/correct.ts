/**
 * A client's correction of one fact, with history kept: the corrected text is written as a new fact (ids derive
 * from text and scope) that supersedes the old one and inherits its scope, key, event time and metadata. The write
 * requires, inside the batch, that the old fact is still the user's and still current, so two racing corrections
 * cannot both replace it.
 */
import { and, eq, sql } from "drizzle-orm";
import { type Quota, quotaExceeded } from "../config/limits";
import { returnedIds, runStatements } from "../db/batch";
import { facts, type JsonObject } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import type { MemoryDeps } from "./deps";
import type { FactRow } from "./facts";
import { factStatements, indexFacts, prepareFacts, withinFactQuota } from "./facts-write";

export type Correction = {
  text: string;
  /** Already validated (FactKey); the old fact's key when absent. */
  key?: string;
  /** Merged over the old fact's; `source`, `confidence` and `date` replace the old fact's when given. */
  metadata?: { source?: string; confidence?: number } & JsonObject;
};

/** The metadata every fact gets from its scope (facts-write.ts): not inherited, written again from the scope. */
const SCOPE_KEYS = new Set(["user_id", "connection_id", "context_type", "project_id", "source"]);

const alreadyReplaced = (id: string, by: string) =>
  new AppError("conflict", `fact ${id} was already replaced by fact ${by}; correct that one (PATCH /v1/memory/facts/${by})`);

const readFact = (deps: MemoryDeps, userId: string, id: string) =>
  deps.db
    .select()
    .from(facts)
    .where(and(eq(facts.id, id), eq(facts.userId, userId)))
    .get();

export async function correctFact(
  deps: MemoryDeps,
  userId: string,
  id: string,
  correction: Correction,
  quota?: Quota,
): Promise<{ fact: FactRow; replaced: string[] }> {
  const old = await readFact(deps, userId, id);
  if (!old) throw notFound("fact");
  if (old.supersededBy) throw alreadyReplaced(id, old.supersededBy);
  const { source, confidence, ...given } = correction.metadata ?? {};
  const inherited = Object.fromEntries(Object.entries(old.metadata).filter(([k]) => !SCOPE_KEYS.has(k)));
  const [fact] = await prepareFacts(userId, [
    {
      text: correction.text,
      key: correction.key ?? old.key,
      connectionId: old.connectionId,
      projectId: old.projectId,
      contextType: old.contextType,
      source: source ?? old.source,
      confidence: confidence ?? old.confidence,
      metadata: { ...inherited, ...given },
      supersedes: [old.id],
      eventAt: old.eventAt ?? old.createdAt,
    },
  ]);
  if (!fact) throw new Error("correctFact: nothing prepared");
  // Unchanged by the batch itself, which only ever replaces the old fact with this one.
  const current = sql`EXISTS (SELECT 1 FROM facts o
    WHERE o.id = ${old.id} AND o.user_id = ${userId} AND (o.superseded_by IS NULL OR o.superseded_by = ${fact.id}))`;
  const writes = factStatements(deps, userId, [fact], { maxFacts: quota?.limit, requires: current });
  const within = quota ? withinFactQuota(userId, [fact.id], quota.limit) : sql`1`;
  const results = await runStatements(deps.db, [...writes.statements, sql`SELECT ${within} AS within, ${current} AS current`]);
  const check = results.at(-1)?.results[0] as { within?: number; current?: number } | undefined;
  if (check?.current !== 1) {
    const now = await readFact(deps, userId, id);
    if (now?.supersededBy) throw alreadyReplaced(id, now.supersededBy);
    throw notFound("fact");
  }
  if (quota && check.within !== 1) throw quotaExceeded(quota, "; this correction would pass it");
  const replaced = [...new Set(writes.supersedingAt.flatMap((i) => returnedIds(results[i])))];
  await indexFacts(deps, userId, [fact], replaced);
  const stored = await readFact(deps, userId, fact.id);
  // Its connection was deleted while it was written (and the old fact with it).
  if (!stored) throw notFound("fact");
  return { fact: stored, replaced };
}
