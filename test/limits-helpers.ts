import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import type { Env } from "../src/config/env";
import { BASE } from "./helpers";
import worker from "./worker";

/**
 * Calls the test Worker with some bindings and variables replaced: the small TEST_* rate limiters in
 * place of production's (raised for the rest of the suite), or a PLAN_QUOTAS override. Everything else
 * (D1, Durable Objects, queues) is the real binding every other test uses.
 */
export function withEnv(overrides: Partial<Env>) {
  const swapped: Env = { ...env, ...overrides };
  return async (key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${BASE}${path}`, {
        method,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      swapped,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    return res;
  };
}

export type Call = ReturnType<typeof withEnv>;

/** Rate limits on (the suite runs with them off), with the small limiters of vitest.config.ts (6 per key, 10 per user, 3 per address, each per 60 s). */
export const smallLimits = (): Partial<Env> => ({
  RATE_LIMITS: "on",
  KEY_RATE_LIMIT: env.TEST_KEY_RATE_LIMIT,
  USER_RATE_LIMIT: env.TEST_USER_RATE_LIMIT,
  ADMIN_RATE_LIMIT: env.TEST_ADMIN_RATE_LIMIT,
});

const WINDOW_MS = 60_000;

/**
 * The local rate limiter counts in fixed 60 s windows on the wall clock. A scenario that happens to
 * straddle a window's end sees its counts reset midway; it is run again (with fresh users) instead,
 * so the assertions never depend on timing. Twice in a row is impossible for a scenario under 60 s.
 */
export async function inOneWindow(scenario: () => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const start = Math.floor(Date.now() / WINDOW_MS);
    try {
      await scenario();
      return;
    } catch (err) {
      const end = Math.floor(Date.now() / WINDOW_MS);
      if (end === start || attempt > 0) throw err;
    }
  }
}
