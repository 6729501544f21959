import { AnthropicError, APIConnectionError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import type { ErrorCode } from "../lib/errors";

/** A model response that stopped sending mid-way (see idle.ts). */
export class ModelStalled extends Error {
  override name = "ModelStalled";
  constructor(readonly idleMs: number) {
    super(`the model sent nothing for ${Math.round(idleMs / 1000)} s`);
  }
}

/** A model response whose connection closed before the reply ended (no `message_stop`, no `error` event). */
export class ModelCutOff extends Error {
  override name = "ModelCutOff";
  constructor() {
    super("the model's reply was cut off before it ended");
  }
}

/** What the SDK says when a stream ended before a message did ("request ended without sending any chunks"). */
const STREAM_ENDED = /^(?:stream ended without producing|request ended without sending any chunks)/;

/** The SDK wraps errors raised while reading a stream: look through `cause`. */
const stalledIn = (err: unknown): ModelStalled | null => {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof ModelStalled) return e;
  return null;
};

export const isAbort = (err: unknown) => err instanceof APIUserAbortError || (err instanceof Error && err.name === "AbortError");

/** Maps a Messages API failure (HTTP status or mid-stream `error` event) to our error code and a user-safe message. */
export function modelFailure(err: unknown): { code: ErrorCode; message: string } | null {
  const stalled = stalledIn(err);
  if (stalled) return { code: "model_error", message: `the model stopped responding (${stalled.message}); try again` };
  if (err instanceof APIConnectionError) return { code: "model_error", message: "could not reach the model" };
  // The SDK's own complaints about a stream that ended early; any other SDK error stays unmapped (and logged).
  if (err instanceof ModelCutOff || (err instanceof AnthropicError && !(err instanceof APIError) && STREAM_ENDED.test(err.message)))
    return { code: "model_error", message: "the model's reply was cut off in transit; try again" };
  if (err instanceof APIError) {
    const type = err.type ?? (err.error as { error?: { type?: string } } | undefined)?.error?.type ?? null;
    if (err.status === 429 || type === "rate_limit_error") return { code: "rate_limited", message: "the model is rate limited; try again shortly" };
    if (err.status === 529 || type === "overloaded_error") return { code: "model_overloaded", message: "the model is overloaded; try again shortly" };
    return { code: "model_error", message: `the model request failed${err.status ? ` (HTTP ${err.status})` : ""}` };
  }
  return null;
}
