/**
 * Estimated cost of one model call: uncached input, cache writes, cache reads and output, each at the
 * model's price (USD per million tokens). An unknown model costs 0 and says so (`priced: false`), so a
 * new model id never fails a turn; prices can be set with MODEL_PRICES.
 */
import type { ModelPrice } from "../config/config";

export type TokenUsage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
};

/** Built-in prices of the current models (USD per million tokens; 5-minute cache writes). */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  "claude-opus-5-5": { input: 4, output: 20, cache_write: 5, cache_read: 0.2 },
  "claude-sonnet-5-5": { input: 2, output: 10, cache_write: 2.5, cache_read: 0.1 },
  "claude-haiku-5-5": { input: 0.1, output: 0.5, cache_write: 0.125, cache_read: 0.01 },
};

export function priceOf(model: string | null, overrides: Readonly<Record<string, ModelPrice>> = {}): ModelPrice | null {
  if (!model) return null;
  return overrides[model] ?? DEFAULT_PRICES[model] ?? null;
}

export function estimateCost(usage: TokenUsage, price: ModelPrice | null): number {
  if (!price) return 0;
  const cost =
    usage.input_tokens * price.input +
    (usage.cache_creation_input_tokens ?? 0) * price.cache_write +
    (usage.cache_read_input_tokens ?? 0) * price.cache_read +
    usage.output_tokens * price.output;
  // Micro-dollar precision: sums of many rows stay readable.
  return Math.round(cost) / 1_000_000;
}
