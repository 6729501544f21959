/**
 * The two injected tiers as one shape: the working-memory narrative, the scaffold and its per-key entries.
 * The user row holds the current tiers and every memory revision (`memory_runs`) a copy of them as they stood
 * after it, under the same column names, so one object is written to both.
 */
import { and, eq, isNotNull, lt, lte, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { type JsonObject, memoryRuns, type ScaffoldKeyMeta, type ScaffoldMeta, type ScaffoldTombstone } from "../db/schema";

export type Tiers = { workingMemory: string; scaffold: JsonObject; scaffoldMeta: ScaffoldMeta };

/**
 * How many of a user's latest revisions keep their copy of the tiers. A copy can be tens of kilobytes and
 * consolidations run many times a day, so older revisions drop theirs (they stay listed, not restorable).
 */
export const KEPT_COPIES = 100;

/** What a revision holds once its copy of the tiers is dropped. */
const NO_COPY = { workingMemory: null, scaffold: null, scaffoldMeta: null };

/** The statement, for the batch that writes revision `rev`, that drops the copy of the revision falling out of the latest `KEPT_COPIES`. */
export const dropOldCopies = (db: Db, userId: string, rev: number, guard?: SQL) =>
  db
    .update(memoryRuns)
    .set(NO_COPY)
    .where(and(eq(memoryRuns.userId, userId), lte(memoryRuns.rev, rev - KEPT_COPIES), isNotNull(memoryRuns.workingMemory), guard));

/**
 * Forgets the copies every revision but the latest keeps (the latest holds the tiers as they are now), so text
 * the user corrected away cannot be read or restored from an earlier revision. The revisions stay listed, not
 * restorable. Returns how many copies were dropped.
 */
export async function forgetCopies(db: Db, userId: string): Promise<number> {
  const latest = sql`(SELECT max(rev) FROM memory_runs WHERE user_id = ${userId})`;
  const dropped = await db
    .update(memoryRuns)
    .set(NO_COPY)
    .where(and(eq(memoryRuns.userId, userId), lt(memoryRuns.rev, latest), isNotNull(memoryRuns.workingMemory)))
    .returning({ id: memoryRuns.id });
  return dropped.length;
}

/** What an erase leaves. */
export const ERASED_TIERS: Tiers = { workingMemory: "", scaffold: {}, scaffoldMeta: {} };

/** How many removed keys are remembered; the oldest removals are forgotten first. */
export const MAX_TOMBSTONES = 100;

export const isTombstone = (m: ScaffoldMeta[string]): m is ScaffoldTombstone => "removed" in m && m.removed === true;

/** The entries of the keys the scaffold holds, as the user sees them: removed keys are not keys. */
export function keyMeta(scaffold: JsonObject, meta: ScaffoldMeta): Record<string, ScaffoldKeyMeta> {
  const out: Record<string, ScaffoldKeyMeta> = {};
  for (const [key, m] of Object.entries(meta)) if (!isTombstone(m) && key in scaffold) out[key] = m;
  return out;
}

/** Keeps the newest `MAX_TOMBSTONES` removals, so keys removed over years do not grow every prompt's read without bound. */
export function pruneTombstones(meta: ScaffoldMeta): ScaffoldMeta {
  const removed = Object.entries(meta).filter(([, m]) => isTombstone(m));
  if (removed.length <= MAX_TOMBSTONES) return meta;
  const dropped = removed.sort(([, a], [, b]) => b.updated_at - a.updated_at).slice(MAX_TOMBSTONES);
  const out = { ...meta };
  for (const [key] of dropped) delete out[key];
  return out;
}
