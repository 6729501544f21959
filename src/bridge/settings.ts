/**
 * The bridge's one setting. It lives here, beside the code that uses it, and is validated the same
 * way as src/config/config.ts: a bad value fails with a message naming it.
 */
import { z } from "zod";
import { ConfigError } from "../config/config";
import type { Env } from "../config/env";

declare module "../config/env" {
  interface Env {
    /** How long a suspended turn waits for the client's tool result, in seconds. */
    CONTINUATION_TTL_SECONDS?: string;
  }
}

export const DEFAULT_CONTINUATION_TTL_SECONDS = 30 * 60;

const Ttl = z.coerce
  .number({ error: "CONTINUATION_TTL_SECONDS must be a number" })
  .int("CONTINUATION_TTL_SECONDS must be an integer")
  .min(5, "CONTINUATION_TTL_SECONDS must be at least 5")
  .max(7 * 24 * 3600, "CONTINUATION_TTL_SECONDS must be at most 604800")
  .default(DEFAULT_CONTINUATION_TTL_SECONDS);

export function continuationTtlMs(env: Env): number {
  const parsed = Ttl.safeParse(env.CONTINUATION_TTL_SECONDS === "" ? undefined : env.CONTINUATION_TTL_SECONDS);
  if (!parsed.success) throw new ConfigError(`invalid configuration: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return parsed.data * 1000;
}
