import { and, eq, lt, sql } from "drizzle-orm";
import type { EraseHook } from "../core/capability";
import { newId } from "../db/client";
import { connections, contextEvents, contextLogs, facts, memoryRuns, users } from "../db/schema";
import { memoryDeps } from "./deps";
import { ERASED_TIERS } from "./tiers";

/**
 * Memory's part of an erase: facts, events, context logs, working memory, scaffold and what connections
 * learned, then the vectors. The batch deletes every earlier revision, and with them their copies of the
 * tiers, so nothing from before the erase can be restored; and it writes an `erase` revision (its copy is the
 * empty tiers), so a consolidation, edit or restore already in flight cannot write the old memory back: revision
 * numbers only grow (migration 0020), so none of them can take a number the erase freed.
 */
export const eraseMemory: EraseHook = async ({ env, config, db, userId, now }) => {
  const deps = memoryDeps(env, config, db);
  // The erase's revision is the next one at the moment the batch runs, read inside it: a consolidation, edit or
  // restore that committed since this hook ran cannot make the erase fail on the revision's unique index.
  const latest = sql<number>`(SELECT coalesce(max(rev), 0) FROM memory_runs WHERE user_id = ${userId})`;
  return {
    statements: [
      { statement: db.insert(memoryRuns).values({ id: newId("run"), userId, rev: sql`${latest} + 1`, kind: "erase", ...ERASED_TIERS, createdAt: now }) },
      {
        count: "memory_runs",
        statement: db
          .delete(memoryRuns)
          .where(and(eq(memoryRuns.userId, userId), lt(memoryRuns.rev, latest)))
          .returning({ id: memoryRuns.id }),
      },
      { count: "facts", statement: db.delete(facts).where(eq(facts.userId, userId)).returning({ id: facts.id }) },
      { count: "events", statement: db.delete(contextEvents).where(eq(contextEvents.userId, userId)).returning({ id: contextEvents.id }) },
      { count: "context_logs", statement: db.delete(contextLogs).where(eq(contextLogs.userId, userId)).returning({ id: contextLogs.id }) },
      {
        count: "connections_reset",
        statement: db.update(connections).set({ learnedInfo: {} }).where(eq(connections.userId, userId)).returning({ id: connections.id }),
      },
      {
        statement: db
          .update(users)
          .set({ ...ERASED_TIERS, learnedInfo: {}, updatedAt: now })
          .where(eq(users.id, userId)),
      },
    ],
    cleared: ["working_memory", "scaffold"],
    kept: ["connections (their settings; what was learned about them is cleared)"],
    // The vectors of the facts the batch deleted, those a consolidation wrote while the erase was prepared included.
    after: async (erased) => {
      try {
        return { counts: { vectors: await deps.vectors.erase(userId, [...(erased.facts ?? [])]) } };
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        return { counts: { vectors: 0 }, warning: `vectors could not be removed now (${why}); they are unreachable, as their facts are gone` };
      }
    },
  };
};
