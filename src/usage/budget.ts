/**
 * The per-user daily chat token budget (DAILY_CHAT_TOKENS): the chat model's tokens spent at the user's request,
 * by chat turns and by on-demand lesson extraction (brain_extract). Over it, new turns get 429 and brain_extract
 * a tool error until the next UTC day.
 */
import { and, eq, gte, inArray, sql } from "drizzle-orm";
import type { Config } from "../config/config";
import type { Db } from "../db/client";
import { usage } from "../db/schema";
import { AppError } from "../lib/errors";

export const DAY_MS = 86_400_000;
export const dayStart = (now: number) => Math.floor(now / DAY_MS) * DAY_MS;

/** Every token a model call counted: uncached input, cache reads and writes, and output. */
export const allTokens = sql<number>`coalesce(sum(${usage.inputTokens} + ${usage.outputTokens} + ${usage.cacheReadTokens} + ${usage.cacheCreationTokens}), 0)`;

export type ChatBudget = { limit: number | null; used: number; remaining: number | null; resets_at: number };

/** The usage kinds the budget counts. */
const BUDGET_KINDS = ["chat", "extraction_on_demand"] as const;

/** Today's chat tokens of the user so far, as a query that can join a batch (one row: `used`). */
export const chatSpentQuery = (db: Db, userId: string, now: number) =>
  db
    .select({ used: allTokens })
    .from(usage)
    .where(and(eq(usage.userId, userId), inArray(usage.kind, [...BUDGET_KINDS]), gte(usage.createdAt, dayStart(now))));

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

/** Seconds to wait when other running turns hold the rest of the budget: they settle to what they spent within a turn. */
const HELD_RETRY_SECONDS = 10;

/**
 * Why a turn could not reserve room for a model call (reservation.ts): the budget is used up (`overBudget`), other
 * turns running now hold the rest of it, or what is left is less than a call needs.
 */
export function reservationRefusal(budget: ChatBudget, held: number, now: number): AppError {
  const spent = overBudget(budget, now);
  if (spent) return spent;
  if (held > 0)
    return new AppError("rate_limited", "other turns running now hold the rest of today's chat budget; try again when they end", undefined, HELD_RETRY_SECONDS);
  const retryAfter = Math.max(1, Math.ceil((budget.resets_at - now) / 1000));
  return new AppError(
    "rate_limited",
    `today's chat budget has ${budget.remaining} tokens left, too few for a model call; it resets at ${new Date(budget.resets_at).toISOString()}`,
    undefined,
    retryAfter,
  );
}

/** Why a new chat-model call may not start now (see `overBudget`), or null; no read when there is no limit. */
export async function chatBudgetRefusal(db: Db, userId: string, config: Config, now = Date.now()): Promise<AppError | null> {
  return config.dailyChatTokens ? overBudget(await chatBudget(db, userId, config, now), now) : null;
}

/** Throws `rate_limited` (429, with Retry-After) when today's chat tokens are used up. */
export async function assertChatBudget(db: Db, userId: string, config: Config, now = Date.now()): Promise<void> {
  const refused = await chatBudgetRefusal(db, userId, config, now);
  if (refused) throw refused;
}
