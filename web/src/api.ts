/**
 * The public HTTP API, nothing else: JSON calls with the user's key, the one error shape, and chat
 * turns as Server-Sent Events parsed with eventsource-parser's stream (a few hundred bytes minified).
 */
import { EventSourceParserStream } from "eventsource-parser/stream";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
  ) {
    super(message);
  }
}

/** What to tell a person about an error code: plain words and what to do next. */
export function explain(err: unknown): string {
  if (!(err instanceof ApiError)) return `Could not reach engram (${err instanceof Error ? err.message : String(err)}). Check your connection and try again.`;
  const advice: Record<string, string> = {
    unauthorized: "Your API key was not accepted. Sign out and sign in with a valid key.",
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
  return `${err.message}. ${advice[err.code] ?? ""}${ref}`.replace(/\.\s*\./, ".").trim();
}

export type StreamEvent = { event: string; data: Record<string, unknown> };

export class Api {
  /** `onUnauthorized`: the key stopped working (revoked, rotated, erased user); the app signs out. */
  constructor(
    private readonly key: string,
    private readonly onUnauthorized?: () => void,
  ) {}

  private async request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    if (res.ok) return res;
    const parsed = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string; request_id?: string } } | null;
    const e = parsed?.error;
    if (res.status === 401) this.onUnauthorized?.();
    throw new ApiError(res.status, e?.code ?? "internal", e?.message ?? `HTTP ${res.status}`, e?.request_id ?? res.headers.get("x-request-id"));
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await (await this.request(method, path, body)).json()) as T;
  }

  get = <T>(path: string) => this.json<T>("GET", path);

  /** A whole answer as a file's content (the account archive's download). */
  async blob(path: string): Promise<Blob> {
    return (await this.request("GET", path)).blob();
  }

  /** A streamed turn (chat or resume): yields each SSE event until the server closes the stream. */
  async *stream(path: string, body: unknown, signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const res = await this.request("POST", path, body, signal);
    if (!res.body) return;
    const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
    const reader = events.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        let data: Record<string, unknown> = {};
        try {
          data = JSON.parse(value.data) as Record<string, unknown>;
        } catch {
          data = { raw: value.data };
        }
        yield { event: value.event ?? "message", data };
      }
    } finally {
      reader.releaseLock();
    }
  }
}

export const q = (params: Record<string, string | number | undefined | null>): string => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") s.set(k, String(v));
  const text = s.toString();
  return text ? `?${text}` : "";
};
