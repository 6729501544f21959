/**
 * The two injected tiers as one shape: the working-memory narrative, the scaffold and its per-key entries.
 * The user row holds the current tiers and every memory revision (`memory_runs`) a copy of them as they stood
 * after it, under the same column names, so one object is written to both.
 */
import type { JsonObject, ScaffoldKeyMeta, ScaffoldMeta, ScaffoldTombstone } from "../db/schema";

export type Tiers = { workingMemory: string; scaffold: JsonObject; scaffoldMeta: ScaffoldMeta };

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
