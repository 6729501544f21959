/**
 * The one place model ids live, with what each model accepts (docs/models.md) and its list prices.
 * Request building (src/model/request.ts), config defaults, cost estimates (usage rows) and the test fake
 * all read this table, so a new model is one entry here, prices included.
 */
export type Effort = "low" | "medium" | "high" | "xhigh" | "max";
export const EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const satisfies readonly Effort[];

export type ThinkingDisplay = "summarized" | "omitted";

/** USD per million tokens. `cacheWrite` is the 5-minute write price. */
export type Prices = { input: number; output: number; cacheWrite: number; cacheRead: number };

export type ModelInfo = {
  id: string;
  /**
   * `adaptive-always`: thinking cannot be turned off. `adaptive-or-between-tools`: the lowest setting is
   * `between_tools` (efforts low..high only), `disabled` is rejected. `adaptive-or-disabled`: `disabled`
   * is accepted at effort high or below.
   */
  thinking: "adaptive-always" | "adaptive-or-between-tools" | "adaptive-or-disabled";
  defaultEffort: Effort;
  /** tool_choice `any` / `tool`: never, or only while thinking is disabled. */
  forcedToolChoice: "never" | "thinking-disabled";
  contextWindow: number;
  maxOutput: number;
  /** Smallest prefix the API caches, in tokens. */
  minCacheTokens: number;
  prices: Prices;
  /** Prompt-length price tier: a request whose prompt exceeds `aboveTokens` pays `prices` on every token. */
  longPrompt?: { aboveTokens: number; prices: Prices };
};

/** What the Fable models share: thinking always adaptive at high effort by default, no forced tool choice, 1M / 128K. */
const FABLE = {
  thinking: "adaptive-always",
  defaultEffort: "high",
  forcedToolChoice: "never",
  contextWindow: 1_000_000,
  maxOutput: 128_000,
  minCacheTokens: 512,
} as const;

/** Prices read from the model pages and the pricing page, November 2026. */
export const MODELS = {
  "claude-sonnet-5-5": {
    id: "claude-sonnet-5-5",
    thinking: "adaptive-or-between-tools",
    defaultEffort: "high",
    forcedToolChoice: "never",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    minCacheTokens: 512,
    // Cache reads were cut to $0.10 on 2026-10-07.
    prices: { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.1 },
  },
  "claude-opus-5-5": {
    id: "claude-opus-5-5",
    thinking: "adaptive-always",
    defaultEffort: "medium",
    forcedToolChoice: "never",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    minCacheTokens: 512,
    prices: { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2 },
  },
  "claude-haiku-5-5": {
    id: "claude-haiku-5-5",
    thinking: "adaptive-or-disabled",
    defaultEffort: "medium",
    forcedToolChoice: "thinking-disabled",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    minCacheTokens: 512,
    prices: { input: 0.1, output: 0.5, cacheWrite: 0.125, cacheRead: 0.01 },
    longPrompt: { aboveTokens: 100_000, prices: { input: 0.5, output: 2.5, cacheWrite: 0.625, cacheRead: 0.05 } },
  },
  "claude-fable-5-1": {
    id: "claude-fable-5-1",
    ...FABLE,
    // $10 / $50 as Fable 5; cache reads cut to a quarter of Fable 5's $1.00 (0.025x input); writes 1.25x.
    prices: { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 0.25 },
  },
  "claude-fable-5-2": {
    id: "claude-fable-5-2",
    ...FABLE,
    // $8 / $40 (Models overview, read 2026-11-24), a fifth below Fable 5.1. Writes 1.25x input; reads kept at
    // Fable 5.1's 0.025x ($0.20): the pages we could read did not list the 5.2 cache prices (see docs/models.md).
    prices: { input: 8, output: 40, cacheWrite: 10, cacheRead: 0.2 },
  },
} as const satisfies Record<string, ModelInfo>;

export type ModelId = keyof typeof MODELS;
export const MODEL_IDS = Object.keys(MODELS) as ModelId[];

export const DEFAULT_CHAT_MODEL: ModelId = "claude-sonnet-5-5";
export const DEFAULT_BACKGROUND_MODEL: ModelId = "claude-haiku-5-5";

export const isKnownModel = (id: string): id is ModelId => Object.hasOwn(MODELS, id);

/**
 * What we know about `id`. An id not in the table (a newer model, a dated alias) is treated like the
 * strictest current model: adaptive thinking, no forced tool choice, Sonnet prices.
 */
export function modelInfo(id: string): ModelInfo {
  if (isKnownModel(id)) return MODELS[id];
  return { ...MODELS[DEFAULT_CHAT_MODEL], id, thinking: "adaptive-always", forcedToolChoice: "never" };
}

export type TokenUsage = {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** The API's count of the web searches a call ran (a search that failed is not counted, nor billed). */
  server_tool_use?: { web_search_requests?: number | null } | null;
  /** The same count once summed into a turn's usage. */
  web_search_requests?: number | null;
};

/** What the API charges for one web search, whatever the model: $10 per 1,000 searches, on top of the tokens. */
export const WEB_SEARCH_USD = 0.01;

/** The web searches `usage` ran: from one call's `server_tool_use`, or from a sum already taken. */
export const webSearches = (usage: TokenUsage): number => usage.server_tool_use?.web_search_requests ?? usage.web_search_requests ?? 0;

/** Per-model price overrides (MODEL_PRICES): they replace the catalogue's prices, every tier, or price a model it lacks. */
export type PriceOverrides = Readonly<Record<string, Prices>>;

/**
 * The prices one call of `id` pays: an override, else the catalogue's (its long-prompt tier when the
 * prompt is above it). A model with neither has no price (null): it is recorded at cost 0, not guessed.
 */
export function pricesFor(id: string | null, usage: TokenUsage, overrides: PriceOverrides = {}): Prices | null {
  if (!id) return null;
  const override = Object.hasOwn(overrides, id) ? overrides[id] : undefined;
  if (override) return override;
  if (!isKnownModel(id)) return null;
  const info: ModelInfo = MODELS[id];
  const prompt = usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
  return info.longPrompt && prompt > info.longPrompt.aboveTokens ? info.longPrompt.prices : info.prices;
}

/**
 * Estimated USD cost of one model call (uncached input, cache writes, cache reads, output, and its web searches),
 * to the micro-dollar. A model without a price costs 0 for its tokens; its searches still cost what the API charges.
 */
export function estimateCost(id: string | null, usage: TokenUsage, overrides: PriceOverrides = {}): number {
  const p = pricesFor(id, usage, overrides);
  const write = usage.cache_creation_input_tokens ?? 0;
  const read = usage.cache_read_input_tokens ?? 0;
  // Prices are per million tokens, so this is in micro-dollars.
  const tokens = p ? usage.input_tokens * p.input + write * p.cacheWrite + read * p.cacheRead + usage.output_tokens * p.output : 0;
  // Micro-dollar precision: sums of many rows stay readable.
  return Math.round(tokens + webSearches(usage) * WEB_SEARCH_USD * 1_000_000) / 1_000_000;
}
