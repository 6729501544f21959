import { z } from "zod";
import type { Env } from "./env";
import { DEFAULT_COSTS, type PlanQuotas, parsePlanQuotas, type RequestCosts } from "./limits";
import { DEFAULT_BACKGROUND_MODEL, DEFAULT_CHAT_MODEL, EFFORTS, type Effort, type Prices, type ThinkingDisplay } from "./models";
import { DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_IDS, type EmbeddingModel } from "./workers-ai";

const optionalSecret = z.string().trim().optional();

/**
 * Origins a browser may call the API from, comma-separated (`https://app.example.com,http://localhost:5173`):
 * each exactly an origin (scheme, host, port), so a typo never widens the list.
 */
const Origins = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const origins = (v ?? "")
      .split(",")
      .map((o) => o.trim())
      .filter(Boolean);
    for (const o of origins) {
      const origin = URL.canParse(o) ? new URL(o).origin : "null";
      if (origin !== o || !/^https?:/.test(o)) {
        ctx.addIssue({ code: "custom", message: `"${o}" is not an origin like https://app.example.com (scheme, host, optional port; no path)` });
        return z.NEVER;
      }
    }
    return new Set(origins) as ReadonlySet<string>;
  });

const intSetting = (name: string, fallback: number, min: number, max: number) =>
  z.coerce
    .number({ error: `${name} must be a number` })
    .int(`${name} must be an integer`)
    .min(min, `${name} must be at least ${min}`)
    .max(max, `${name} must be at most ${max}`)
    .default(fallback);

/** A comma-separated list setting (unset: empty); every entry must pass `valid`, else the message names the setting. */
const commaList = (name: string, what: string, valid: (entry: string) => boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const entries = (v ?? "")
        .split(",")
        .map((e) => e.trim())
        .filter(Boolean);
      const bad = entries.find((e) => !valid(e));
      if (bad === undefined) return entries;
      ctx.addIssue({ code: "custom", message: `${name}: "${bad}" is not ${what}` });
      return z.NEVER;
    });

/** USD per million tokens, as operators write it; read into the model catalogue's price shape. */
const ModelPrice = z
  .strictObject({ input: z.number().min(0), output: z.number().min(0), cache_write: z.number().min(0), cache_read: z.number().min(0) })
  .transform((p): Prices => ({ input: p.input, output: p.output, cacheWrite: p.cache_write, cacheRead: p.cache_read }));
const ModelPrices = z.record(z.string().min(1), ModelPrice);

/** Every setting by its variable name (the README's configuration table lists them all, test/docs-lists.test.ts checks). */
export const ConfigSchema = z.object({
  ADMIN_TOKEN: optionalSecret.refine((v) => v === undefined || v.length >= 16, {
    message: "ADMIN_TOKEN must be at least 16 characters",
  }),
  ANTHROPIC_API_KEY: optionalSecret,
  ANTHROPIC_BASE_URL: z.url({ error: "ANTHROPIC_BASE_URL must be a URL" }).default("https://api.anthropic.com"),
  CHAT_MODEL: z.string().min(1).default(DEFAULT_CHAT_MODEL),
  BACKGROUND_MODEL: z.string().min(1).default(DEFAULT_BACKGROUND_MODEL),
  // Unset: each model's own default effort. THINKING_DISPLAY "summarized" streams the notes between tool calls.
  CHAT_EFFORT: z.enum(EFFORTS).optional(),
  THINKING_DISPLAY: z.enum(["summarized", "omitted"]).default("summarized"),
  // Thinking counts toward it: 4,096 cut high-effort replies short. Chat always streams, so a large cap is safe.
  MAX_TOKENS: intSetting("MAX_TOKENS", 16_000, 1, 64000),
  AGENT_MAX_ITERATIONS: intSetting("AGENT_MAX_ITERATIONS", 8, 1, 50),
  MODEL_MAX_RETRIES: intSetting("MODEL_MAX_RETRIES", 2, 0, 10),
  MODEL_TIMEOUT_MS: intSetting("MODEL_TIMEOUT_MS", 120_000, 1000, 600_000),
  MAX_BODY_BYTES: intSetting("MAX_BODY_BYTES", 256 * 1024, 1024, 10 * 1024 * 1024),
  CONTINUATION_TTL_SECONDS: intSetting("CONTINUATION_TTL_SECONDS", 30 * 60, 5, 7 * 24 * 3600),
  VECTOR_BACKEND: z.enum(["local", "vectorize"]).default("local"),
  // Read with VECTOR_BACKEND=vectorize only; the Vectorize index must have the model's dimensions (docs/memory.md).
  EMBEDDING_MODEL: z.enum(EMBEDDING_MODEL_IDS, { error: `EMBEDDING_MODEL must be one of ${EMBEDDING_MODEL_IDS.join(", ")}` }).default(DEFAULT_EMBEDDING_MODEL),
  // One more Workers AI call per search: off unless asked for.
  RERANK: z.enum(["on", "off"], { error: 'RERANK must be "on" or "off"' }).default("off"),
  HISTORY_BUDGET_TOKENS: intSetting("HISTORY_BUDGET_TOKENS", 16_000, 1_000, 1_000_000),
  DAILY_CHAT_TOKENS: intSetting("DAILY_CHAT_TOKENS", 2_000_000, 0, 1_000_000_000),
  AUDIT_RETENTION_DAYS: intSetting("AUDIT_RETENTION_DAYS", 30, 0, 3650),
  // "off" skips the request rate limits (a local load test from one key); quotas always hold.
  CORS_ORIGINS: Origins,
  RATE_LIMITS: z.enum(["on", "off"], { error: 'RATE_LIMITS must be "on" or "off"' }).default("on"),
  RATE_COST_TURN: intSetting("RATE_COST_TURN", DEFAULT_COSTS.turn, 1, 100),
  RATE_COST_IMPORT: intSetting("RATE_COST_IMPORT", DEFAULT_COSTS.import, 1, 100),
  PLAN_QUOTAS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const quotas = parsePlanQuotas(v);
      if (typeof quotas !== "string") return quotas;
      ctx.addIssue({ code: "custom", message: quotas });
      return z.NEVER;
    }),
  // Origins browsers may call /mcp from besides loopback ones, and the hosts /mcp answers for (src/mcp/origin.ts).
  MCP_ALLOWED_ORIGINS: commaList("MCP_ALLOWED_ORIGINS", "an origin like https://app.example.com", (v) => URL.canParse(v) && new URL(v).origin === v),
  MCP_ALLOWED_HOSTS: commaList("MCP_ALLOWED_HOSTS", "a host name like engram.example.com or [::1]", (v) => /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/i.test(v)),
  MODEL_PRICES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return {};
      try {
        const parsed = ModelPrices.safeParse(JSON.parse(v));
        if (parsed.success) return parsed.data;
      } catch {
        // reported below
      }
      ctx.addIssue({
        code: "custom",
        message: 'MODEL_PRICES must be JSON like {"model-id": {"input": 2, "output": 10, "cache_write": 2.5, "cache_read": 0.1}} (USD per million tokens)',
      });
      return z.NEVER;
    }),
});

export type Config = {
  adminToken: string | undefined;
  anthropicApiKey: string | undefined;
  anthropicBaseUrl: string;
  chatModel: string;
  backgroundModel: string;
  chatEffort: Effort | undefined;
  thinkingDisplay: ThinkingDisplay;
  maxTokens: number;
  maxIterations: number;
  modelMaxRetries: number;
  modelTimeoutMs: number;
  maxBodyBytes: number;
  /** How long a suspended turn waits for the client's tool result. */
  continuationTtlMs: number;
  vectorBackend: "local" | "vectorize";
  /** The Workers AI embedding model of the vectorize backend. */
  embeddingModel: EmbeddingModel;
  /** Whether fact search reorders its best candidates with the Workers AI reranker. */
  rerank: boolean;
  /** Estimated tokens of conversation history sent per model call; older turns are summarised. */
  historyBudgetTokens: number;
  /** Chat tokens (input, cache and output) a user may spend per UTC day; 0 means no limit. */
  dailyChatTokens: number;
  /** Days a chat turn's audit row (the system text it was shown) is kept; 0 keeps them until erased. */
  auditRetentionDays: number;
  /** Price overrides by model id, on top of the built-in prices. */
  modelPrices: Record<string, Prices>;
  /** Origins allowed to call the API from a browser (CORS); empty: none. */
  corsOrigins: ReadonlySet<string>;
  /** Whether requests are rate limited at all (the bindings' limits apply when on). */
  rateLimits: boolean;
  /** What a chat turn and a bulk import count as against the request rate limits. */
  requestCosts: RequestCosts;
  /** Stored objects each plan may hold. */
  quotas: PlanQuotas;
  /** Origins (besides loopback ones) whose pages may call /mcp; a request with any other Origin is refused. */
  mcpAllowedOrigins: readonly string[];
  /** Host names /mcp answers for; empty: any (Cloudflare routes only this deployment's hosts here). */
  mcpAllowedHosts: readonly string[];
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

const cache = new WeakMap<object, Config>();

/** Validates the environment once per env object; a bad setting fails with a message naming it. */
export function loadConfig(env: Env): Config {
  const hit = cache.get(env);
  if (hit) return hit;
  // An empty variable means "not set", for every setting alike.
  const vars = Object.fromEntries(Object.entries(env).filter(([, v]) => !(typeof v === "string" && v.trim() === "")));
  const parsed = ConfigSchema.safeParse(vars);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ConfigError(`invalid configuration: ${detail}`);
  }
  const c = parsed.data;
  if (c.VECTOR_BACKEND === "vectorize" && (!env.VECTORS || !env.AI)) {
    throw new ConfigError("invalid configuration: VECTOR_BACKEND=vectorize needs the VECTORS and AI bindings");
  }
  if (c.RERANK === "on" && !env.AI) throw new ConfigError("invalid configuration: RERANK=on needs the AI binding");
  const config: Config = {
    adminToken: c.ADMIN_TOKEN,
    anthropicApiKey: c.ANTHROPIC_API_KEY,
    anthropicBaseUrl: c.ANTHROPIC_BASE_URL,
    chatModel: c.CHAT_MODEL,
    backgroundModel: c.BACKGROUND_MODEL,
    chatEffort: c.CHAT_EFFORT,
    thinkingDisplay: c.THINKING_DISPLAY,
    maxTokens: c.MAX_TOKENS,
    maxIterations: c.AGENT_MAX_ITERATIONS,
    modelMaxRetries: c.MODEL_MAX_RETRIES,
    modelTimeoutMs: c.MODEL_TIMEOUT_MS,
    maxBodyBytes: c.MAX_BODY_BYTES,
    continuationTtlMs: c.CONTINUATION_TTL_SECONDS * 1000,
    vectorBackend: c.VECTOR_BACKEND,
    embeddingModel: c.EMBEDDING_MODEL,
    rerank: c.RERANK === "on",
    historyBudgetTokens: c.HISTORY_BUDGET_TOKENS,
    dailyChatTokens: c.DAILY_CHAT_TOKENS,
    auditRetentionDays: c.AUDIT_RETENTION_DAYS,
    modelPrices: c.MODEL_PRICES,
    corsOrigins: c.CORS_ORIGINS,
    rateLimits: c.RATE_LIMITS === "on",
    requestCosts: { turn: c.RATE_COST_TURN, import: c.RATE_COST_IMPORT },
    quotas: c.PLAN_QUOTAS,
    mcpAllowedOrigins: c.MCP_ALLOWED_ORIGINS,
    mcpAllowedHosts: c.MCP_ALLOWED_HOSTS.map((h) => h.toLowerCase()),
  };
  cache.set(env, config);
  return config;
}
