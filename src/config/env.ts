/**
 * The Worker's environment. Bindings and vars come from wrangler.toml through `wrangler types`
 * (worker-configuration.d.ts at the repository root, wrangler's default place: regenerate with `npm run types`, CI fails when it is stale);
 * VECTORS and AI are optional there because only the production environment binds them.
 * Added here: secrets and tuning variables that no configuration file declares, all optional.
 */
declare global {
  namespace Cloudflare {
    interface Env {
      ADMIN_TOKEN?: string;
      ANTHROPIC_API_KEY?: string;
      MAX_TOKENS?: string;
      AGENT_MAX_ITERATIONS?: string;
      MODEL_MAX_RETRIES?: string;
      MODEL_TIMEOUT_MS?: string;
      MAX_BODY_BYTES?: string;
      CONTINUATION_TTL_SECONDS?: string;
      HISTORY_BUDGET_TOKENS?: string;
      DAILY_CHAT_TOKENS?: string;
      AUDIT_RETENTION_DAYS?: string;
      MODEL_PRICES?: string;
      PLAN_QUOTAS?: string;
      RATE_COST_TURN?: string;
      RATE_COST_IMPORT?: string;
      MCP_ALLOWED_ORIGINS?: string;
    }
  }
}

export type Env = Cloudflare.Env;
