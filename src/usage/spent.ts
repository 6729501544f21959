import type { TokenUsage } from "../config/models";

/** Tokens spent by the model calls of one turn segment, summed as each call completes. */
export type SpentTokens = Required<{ [K in keyof TokenUsage]: number }>;

export const noTokens = (): SpentTokens => ({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });

export function addTokens(spent: SpentTokens, u: TokenUsage): void {
  spent.input_tokens += u.input_tokens;
  spent.output_tokens += u.output_tokens;
  spent.cache_read_input_tokens += u.cache_read_input_tokens ?? 0;
  spent.cache_creation_input_tokens += u.cache_creation_input_tokens ?? 0;
}
