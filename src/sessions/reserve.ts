/**
 * A turn segment's hold on today's chat budget (usage/reservation.ts). A chat turn reserves its first model call in
 * its admission batch, from an over-estimate made before its prompt is built, so the call usually needs no round trip
 * of its own; before any other call the reservation grows to what the segment has spent plus that call. The batch
 * that writes the segment's usage deletes it (bookkeeping.ts).
 */
import { modelTools, type TurnTools } from "../bridge/toolset";
import { PROMPT_BUDGET_CHARS } from "../chat/prompt";
import type { TurnScope } from "../core/context";
import { AppError } from "../lib/errors";
import { approxTokens } from "../lib/text";
import { reserveQuery } from "../usage/reservation";
import type { SpentTokens } from "../usage/spent";
import type { Tally } from "./bookkeeping";
import type { StoredMessage } from "./history";
import { messageTokens } from "./history-budget";

/** Every token the budget counts: uncached input, cache reads and writes, output. */
export const budgetTokens = (s: SpentTokens) => s.input_tokens + s.output_tokens + s.cache_read_input_tokens + s.cache_creation_input_tokens;

/**
 * Before a model call: makes sure the segment's reservation covers what it spent, the call's input and its output
 * limit, and says the limit (lowered near the end of the budget). Throws `rate_limited` when there is no room.
 */
export async function reserveCall(scope: TurnScope, tally: Tally, input: number): Promise<number> {
  const { config } = scope;
  const spent = budgetTokens(tally.spent);
  const reservation = tally.reservation;
  if (spent + input + config.maxTokens <= reservation.tokens) return config.maxTokens;
  const [row] = await reserveQuery(scope.db, {
    reservation,
    userId: scope.userId,
    sessionId: scope.sessionId,
    limit: config.dailyChatTokens,
    spent,
    input,
    maxTokens: config.maxTokens,
    now: Date.now(),
  });
  if (!row) throw new AppError("rate_limited", "today's chat budget has no room left for this turn's next model call; the turn was stopped before it");
  reservation.tokens = row.tokens;
  return row.tokens - spent - input;
}

/**
 * The first call's input, before its prompt is built, rounded up: the history within its budget, the summary, the
 * message, a full prompt (its sections and evidence share `PROMPT_BUDGET_CHARS`) and the tool definitions.
 */
export function firstCallInput(rows: readonly StoredMessage[], summary: string, message: string, budget: number, tools: TurnTools): number {
  const history = Math.min(
    budget,
    rows.reduce((n, r) => n + messageTokens(r), 0),
  );
  const slack = 1_000;
  return history + approxTokens(summary) + approxTokens(message) + PROMPT_BUDGET_CHARS / 4 + approxTokens(JSON.stringify(modelTools(tools))) + slack;
}
