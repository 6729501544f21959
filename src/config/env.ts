import type { SessionObject } from "../sessions/session-do";

/** Bindings and vars the Worker receives. Optional entries exist only in some environments. */
export interface Env {
  DB: D1Database;
  SESSIONS: DurableObjectNamespace<SessionObject>;
  OBSERVATIONS: Queue<unknown>;
  VECTORS?: VectorizeIndex;
  AI?: Ai;
  ADMIN_TOKEN?: string;
  ANTHROPIC_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  CHAT_MODEL?: string;
  BACKGROUND_MODEL?: string;
  MAX_TOKENS?: string;
  AGENT_MAX_ITERATIONS?: string;
  MODEL_MAX_RETRIES?: string;
  MODEL_TIMEOUT_MS?: string;
  MAX_BODY_BYTES?: string;
  CONTINUATION_TTL_SECONDS?: string;
  VECTOR_BACKEND?: string;
  HISTORY_BUDGET_TOKENS?: string;
  DAILY_CHAT_TOKENS?: string;
  MODEL_PRICES?: string;
}
