import { estimateCost, type PriceOverrides, type TokenUsage, webSearches } from "../config/models";

/**
 * What the model calls of one turn segment spent, summed as each call completes: their tokens, and their
 * estimated cost priced call by call, since a price tier (Haiku 5.5's long-prompt price) is decided by
 * each request's own prompt, never by a turn's total.
 */
export type SpentTokens = {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  web_search_requests: number;
  cost_usd: number;
};

export const noTokens = (): SpentTokens => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  web_search_requests: 0,
  cost_usd: 0,
});

// Costs are kept to the micro-dollar, like estimateCost's.
const micro = (usd: number) => Math.round(usd * 1_000_000) / 1_000_000;

function addCounts(spent: SpentTokens, u: TokenUsage): void {
  spent.input_tokens += u.input_tokens;
  spent.output_tokens += u.output_tokens;
  spent.cache_read_input_tokens += u.cache_read_input_tokens ?? 0;
  spent.cache_creation_input_tokens += u.cache_creation_input_tokens ?? 0;
  spent.web_search_requests += webSearches(u);
}

/** Adds one model call of `model`, priced on its own. */
export function addCall(spent: SpentTokens, model: string, u: TokenUsage, prices: PriceOverrides): void {
  addCounts(spent, u);
  spent.cost_usd = micro(spent.cost_usd + estimateCost(model, u, prices));
}

/**
 * Adds what an earlier segment spent and could not record, at the cost it was priced at then (a record
 * saved without one, before costs were kept per call, is priced as one call of `model`).
 */
export function addSpent(spent: SpentTokens, earlier: TokenUsage & { cost_usd?: number }, model: string, prices: PriceOverrides): void {
  addCounts(spent, earlier);
  spent.cost_usd = micro(spent.cost_usd + (earlier.cost_usd ?? estimateCost(model, earlier, prices)));
}
