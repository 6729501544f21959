/**
 * The public HTTP API, nothing else: engram's typed client (client/) with the user's key, the one error shape,
 * and chat turns as Server-Sent Events read by our own small parser (sse.ts).
 * Every call names a path of the OpenAPI document, so a drift between the server and this app breaks its build.
 */
import { createEngramClient, type EngramClient, EngramError } from "../../client/src/index";
import { sseParser } from "./sse";

export { ok, type operations, type Schemas } from "../../client/src/index";
/** An error answer of the API (status, code, message, request id). */
export { EngramError as ApiError };

/** What to tell a person about an error code: plain words and what to do next. */
export function explain(err: unknown): string {
  if (!(err instanceof EngramError))
    return `Could not reach engram (${err instanceof Error ? err.message : String(err)}). Check your connection and try again.`;
  const advice: Record<string, string> = {
    unauthorized: "Your API key was not accepted. Sign in again with a current key.",
    rate_limited: "Too many requests right now. Wait a little and send again.",
    model_overloaded: "The model is overloaded. Try again in a moment.",
    model_error: "The model failed to answer. Send your message again.",
    session_busy: "This conversation is still answering. Wait for it or press Stop.",
    tool_pending: "This conversation is waiting for a tool answer. Answer the prompt above, or cancel it.",
    continuation_expired: "The paused step expired. Send your message again.",
    conflict: "It changed in the meantime. Reload and try again.",
    limit_exceeded: "That is over your plan's limit.",
    quota_exceeded: "Nothing was saved. Delete something first, or move to a larger plan.",
  };
  const ref = err.requestId ? ` (request ${err.requestId})` : "";
  // Limits in bytes mean nothing to a person: this one is said in words only.
  if (err.code === "payload_too_large") return `That is too long to send in one go: shorten it or split it in two.${ref}`;
  return `${err.message}. ${advice[err.code] ?? ""}${ref}`.replace(/\.\s*\./, ".").trim();
}

/** An error event of a chat stream, as the error a call would have thrown. */
export const streamError = (code: string, message: string) => new EngramError(0, code as EngramError["code"], message, null, null, null);

export type StreamEvent = { event: string; data: Record<string, unknown> };

/** The API as this page's user: `ok(api.GET("/v1/sessions"))`. */
export type Api = EngramClient;

/** `onUnauthorized`: the key stopped working (revoked, rotated, erased user); the app signs out. */
export function connect(key: string, onUnauthorized?: () => void): Api {
  const api = createEngramClient({ baseUrl: location.origin, apiKey: key });
  api.use({
    onResponse: ({ response }) => {
      if (response.status === 401) onUnauthorized?.();
    },
  });
  return api;
}

/**
 * A streamed turn (chat or resume), asked for with `parseAs: "stream"`: yields each SSE event until the server
 * closes the stream. An error answer throws before the first event.
 */
export async function* stream(call: Promise<{ data?: ReadableStream<Uint8Array> | null; error?: unknown; response: Response }>): AsyncGenerator<StreamEvent> {
  const { data, error, response } = await call;
  if (!response.ok) throw EngramError.from(response, error);
  if (!data) return;
  const reader = (data as ReadableStream<Uint8Array<ArrayBuffer>>).pipeThrough(new TextDecoderStream()).getReader();
  const parse = sseParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const e of parse(value)) {
        let parsed: Record<string, unknown> = {};
        try {
          parsed = JSON.parse(e.data) as Record<string, unknown>;
        } catch {
          parsed = { raw: e.data };
        }
        yield { event: e.event, data: parsed };
      }
    }
  } finally {
    reader.releaseLock();
  }
}
