/** The memory inspector's reads: the two injected tiers, context logs (what each turn injected), memory runs (revisions). */

import { and, desc, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { newestFirst } from "../db/cursor";
import { snakeRow } from "../db/public-row";
import { contextLogs, memoryRuns, users } from "../db/schema";
import { notFound } from "../lib/errors";
import { wordCount } from "../lib/text";
import { keyMeta, type Tiers } from "./tiers";

export async function readTiers(db: Db, userId: string) {
  const row = await db
    .select({ workingMemory: users.workingMemory, scaffold: users.scaffold, scaffoldMeta: users.scaffoldMeta, updatedAt: users.updatedAt })
    .from(users)
    .where(eq(users.id, userId))
    .get();
  if (!row) throw notFound("user");
  return { ...row, words: wordCount(row.workingMemory) };
}

export async function listContextLogs(db: Db, userId: string, opts: { limit: number; before?: string; sessionId?: string }) {
  const where = and(eq(contextLogs.userId, userId), opts.sessionId ? eq(contextLogs.sessionId, opts.sessionId) : undefined);
  const keys = { at: contextLogs.createdAt, id: contextLogs.id };
  const rows = await newestFirst(db.select().from(contextLogs).$dynamic(), keys, { where, before: opts.before, limit: opts.limit }).all();
  return rows.map((r) => snakeRow(r, ["id", "sessionId", "injected", "createdAt"]));
}

/** A run as listed: what it did, and whether its copy of the tiers can be restored (the copy itself is not listed: it can be large). */
const runColumns = {
  id: memoryRuns.id,
  rev: memoryRuns.rev,
  kind: memoryRuns.kind,
  eventIds: memoryRuns.eventIds,
  summary: memoryRuns.summary,
  model: memoryRuns.model,
  inputTokens: memoryRuns.inputTokens,
  outputTokens: memoryRuns.outputTokens,
  createdAt: memoryRuns.createdAt,
  restorable: sql<number>`${memoryRuns.workingMemory} is not null`,
};

type RunRow = Omit<typeof memoryRuns.$inferSelect, "userId" | keyof Tiers> & { restorable: number };

const publicRun = (r: RunRow) => ({
  ...snakeRow(r, ["id", "rev", "kind", "eventIds", "summary", "model", "inputTokens", "outputTokens", "createdAt"]),
  restorable: Boolean(r.restorable),
});

export async function listRuns(db: Db, userId: string, opts: { limit: number; before?: number }) {
  const rows = await db
    .select(runColumns)
    .from(memoryRuns)
    .where(and(eq(memoryRuns.userId, userId), opts.before ? lt(memoryRuns.rev, opts.before) : undefined))
    .orderBy(desc(memoryRuns.rev))
    .limit(opts.limit)
    .all();
  return rows.map(publicRun);
}

/** One of the user's runs with the tiers as they stood after it (null for a run recorded before copies were kept). */
export async function readRun(db: Db, userId: string, rev: number) {
  const row = await db
    .select({ ...runColumns, workingMemory: memoryRuns.workingMemory, scaffold: memoryRuns.scaffold, scaffoldMeta: memoryRuns.scaffoldMeta })
    .from(memoryRuns)
    .where(and(eq(memoryRuns.userId, userId), eq(memoryRuns.rev, rev)))
    .get();
  if (!row) throw notFound(`memory revision ${rev}`);
  const { workingMemory, scaffold, scaffoldMeta } = row;
  return {
    ...publicRun(row),
    working_memory: workingMemory,
    scaffold,
    confidence: scaffold && scaffoldMeta ? keyMeta(scaffold, scaffoldMeta) : null,
  };
}
