/** Cost control: a per-user daily token budget for background consolidation (usage kind `consolidation`). */
import { and, eq, gte, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { type Plan, usage } from "../db/schema";

/** Tokens (input + output) of consolidation per UTC day. Over it, events wait as `deferred` until the next day. */
export const DAILY_CONSOLIDATION_TOKENS: Record<Plan, number> = { free: 200_000, pro: 2_000_000 };

export type Budget = { limit: number; used: number; remaining: number; exhausted: boolean; resets_at: number };

const DAY = 86_400_000;

export async function consolidationBudget(db: Db, userId: string, plan: Plan, now: number): Promise<Budget> {
  const dayStart = Math.floor(now / DAY) * DAY;
  const row = await db
    .select({ used: sql<number>`coalesce(sum(${usage.inputTokens} + ${usage.outputTokens}), 0)` })
    .from(usage)
    .where(and(eq(usage.userId, userId), eq(usage.kind, "consolidation"), gte(usage.createdAt, dayStart)))
    .get();
  const limit = DAILY_CONSOLIDATION_TOKENS[plan];
  const used = row?.used ?? 0;
  return { limit, used, remaining: Math.max(0, limit - used), exhausted: used >= limit, resets_at: dayStart + DAY };
}

export const deferredReason = (b: Budget) => `daily consolidation budget of ${b.limit} tokens is used up; waiting until ${new Date(b.resets_at).toISOString()}`;
