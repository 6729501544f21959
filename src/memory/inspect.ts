/** The memory inspector's reads: the two injected tiers, context logs (what each turn injected), consolidation runs. */

import { and, desc, eq, lt } from "drizzle-orm";
import type { Db } from "../db/client";
import { afterCursor } from "../db/cursor";
import { contextLogs, memoryRuns, users } from "../db/schema";
import { notFound } from "../lib/errors";
import { wordCount } from "./text";

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
  const rows = await db
    .select()
    .from(contextLogs)
    .where(
      and(
        eq(contextLogs.userId, userId),
        opts.sessionId ? eq(contextLogs.sessionId, opts.sessionId) : undefined,
        afterCursor(contextLogs.createdAt, contextLogs.id, opts.before),
      ),
    )
    .orderBy(desc(contextLogs.createdAt), desc(contextLogs.id))
    .limit(opts.limit)
    .all();
  return rows.map((r) => ({ id: r.id, session_id: r.sessionId, injected: r.injected, created_at: r.createdAt }));
}

export async function listRuns(db: Db, userId: string, opts: { limit: number; before?: number }) {
  const rows = await db
    .select()
    .from(memoryRuns)
    .where(and(eq(memoryRuns.userId, userId), opts.before ? lt(memoryRuns.rev, opts.before) : undefined))
    .orderBy(desc(memoryRuns.rev))
    .limit(opts.limit)
    .all();
  return rows.map((r) => ({
    id: r.id,
    rev: r.rev,
    kind: r.kind,
    event_ids: r.eventIds,
    summary: r.summary,
    model: r.model,
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
    created_at: r.createdAt,
  }));
}
