import type { Context } from "hono";
import { describeFailure } from "../lib/errors";
import type { AppEnv } from "./context";

/**
 * Runs work after the response is sent (the request's `waitUntil`), for writes the caller need not wait
 * for, such as a recall log. A failure is logged (its kind, never the data), not thrown at anyone.
 */
export const afterResponse =
  (c: Context<AppEnv>) =>
  (work: () => Promise<unknown>): void => {
    c.executionCtx.waitUntil(work().catch((err: unknown) => console.error(JSON.stringify({ deferred_write: describeFailure(err) }))));
  };
