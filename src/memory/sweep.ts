/**
 * The memory cron job. It re-enqueues events left pending past a threshold (a lost or failed send),
 * resumes deferred events once the user's budget allows, embeds facts whose indexing failed, and
 * prunes the read-your-writes overlay. Re-enqueueing is safe: consolidation applies a batch once.
 */
import { and, eq, isNull, lt } from "drizzle-orm";
import { contextEvents, facts, users } from "../db/schema";
import { consolidationBudget } from "./budget";
import type { MemoryDeps } from "./deps";
import { enqueue } from "./events";
import { indexFacts, storedFact } from "./facts-write";
import { pruneOverlay } from "./vector-vectorize";

/** Longer than the queue's whole retry window (5 tries, 2-32 s backoff), so the sweep never races a live retry. */
export const STALE_PENDING_MS = 10 * 60_000;
const UNEMBEDDED_MS = 60_000;

const group = <T>(rows: T[], key: (r: T) => string) => {
  const out = new Map<string, T[]>();
  for (const r of rows) out.set(key(r), [...(out.get(key(r)) ?? []), r]);
  return out;
};

export async function sweepMemory(deps: MemoryDeps, now: number) {
  const { db } = deps;
  const stale = await db
    .select({ id: contextEvents.id, userId: contextEvents.userId })
    .from(contextEvents)
    .where(and(eq(contextEvents.processed, false), eq(contextEvents.status, "pending"), lt(contextEvents.createdAt, now - STALE_PENDING_MS)))
    .limit(1000)
    .all();
  let requeued = 0;
  for (const [userId, rows] of group(stale, (r) => r.userId))
    if (
      await enqueue(
        deps,
        userId,
        rows.map((r) => r.id),
      )
    )
      requeued += rows.length;

  const deferredUsers = await db
    .selectDistinct({ userId: contextEvents.userId, plan: users.plan })
    .from(contextEvents)
    .innerJoin(users, eq(users.id, contextEvents.userId))
    .where(and(eq(contextEvents.processed, false), eq(contextEvents.status, "deferred")))
    .limit(100)
    .all();
  let resumed = 0;
  for (const u of deferredUsers) {
    if ((await consolidationBudget(db, u.userId, u.plan, now)).exhausted) continue;
    const rows = await db
      .update(contextEvents)
      .set({ status: "pending", error: null })
      .where(and(eq(contextEvents.userId, u.userId), eq(contextEvents.status, "deferred")))
      .returning({ id: contextEvents.id });
    if (
      await enqueue(
        deps,
        u.userId,
        rows.map((r) => r.id),
      )
    )
      resumed += rows.length;
  }

  const unembedded = await db
    .select()
    .from(facts)
    .where(and(isNull(facts.embeddedAt), isNull(facts.supersededBy), lt(facts.createdAt, now - UNEMBEDDED_MS)))
    .limit(200)
    .all();
  let embedded = 0;
  for (const [userId, rows] of group(unembedded, (r) => r.userId)) {
    embedded += (await indexFacts(deps, userId, rows.map(storedFact), [])).embedded;
  }

  const pruned = deps.vectors.name.endsWith("+overlay") ? await pruneOverlay(db, now) : 0;
  return { requeued, resumed, embedded, overlay_pruned: pruned };
}
