/** The per-user daily chat token budget (DAILY_CHAT_TOKENS): over it, new turns get 429 until the next UTC day. */
import { and, eq, gte, sql } from "drizzle-orm";
import type { Config } from "../config/config";
import type { Db } from "../db/client";
import { usage } from "../db/schema";
import { AppError } from "../lib/errors";

export const DAY_MS = 86_400_000;
export const dayStart = (now: number) => Math.floor(now / DAY_MS) * DAY_MS;

/** Every token a model call counted: uncached input, cache reads and writes, and output. */
export const allTokens = sql<number>`coalesce(sum(${usage.inputTokens} + ${usage.outputTokens} + ${usage.cacheReadTokens} + ${usage.cacheCreationTokens}), 0)`;

export type ChatBudget = { limit: number | null; used: number; remaining: number | null; resets_at: number };

/** Today's chat tokens of the user so far, as a query that can join a batch (one row: `used`). */
export const chatSpentQuery = (db: Db, userId: string, now: number) =>
  db
    .select({ used: allTokens })
    .from(usage)
    .where(and(eq(usage.userId, userId), eq(usage.kind, "chat"), gte(usage.createdAt, dayStart(now))));

export function budgetOf(used: number, config: Config, now: number): ChatBudget {
  const start = dayStart(now);
  const limit = config.dailyChatTokens || null;
  return { limit, used, remaining: limit === null ? null : Math.max(0, limit - used), resets_at: start + DAY_MS };
}

export async function chatBudget(db: Db, userId: string, config: Config, now: number): Promise<ChatBudget> {
  const row = await chatSpentQuery(db, userId, now).get();
  return budgetOf(row?.used ?? 0, config, now);
}

/** Why a new turn may not start today (`rate_limited`, with the seconds until the budget resets), or null. */
export function overBudget(budget: ChatBudget, now: number): AppError | null {
  if (budget.remaining === null || budget.remaining > 0) return null;
  const retryAfter = Math.max(1, Math.ceil((budget.resets_at - now) / 1000));
  return new AppError(
    "rate_limited",
    `today's chat budget of ${budget.limit} tokens is used up; it resets at ${new Date(budget.resets_at).toISOString()}`,
    undefined,
    retryAfter,
  );
}

/** Throws `rate_limited` (429, with Retry-After) when today's chat tokens are used up. */
export async function assertChatBudget(db: Db, userId: string, config: Config, now = Date.now()): Promise<void> {
  if (!config.dailyChatTokens) return;
  const refused = overBudget(await chatBudget(db, userId, config, now), now);
  if (refused) throw refused;
}
