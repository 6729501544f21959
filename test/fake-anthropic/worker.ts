/**
 * A fake of the Anthropic Messages API for tests, run as an auxiliary worker. The real SDK talks to
 * it over HTTP. Tests script it turn by turn, per engram user (the request's `metadata.user_id`),
 * so test files running in parallel never see each other's turns.
 *
 *   POST /__script   {key, steps: Step[]}   queue the next responses for `key`
 *   GET  /__requests?key=                   the Messages requests received for `key`
 *   POST /v1/messages                       the API: JSON, or SSE when `stream: true`
 */
import { approxTokens, errorEvent, messageEvents, messageJson, sseFrame, type WireBlock, type WireEvent, type WireMessage } from "../../src/model/wire";
import { defaultStructuredText, forcedToolChoiceError, formatError, structuredQueue, type StructuredRequest } from "./structured";

export type Citation = { type: "web_search_result_location"; url: string; title: string | null; cited_text: string; encrypted_index: string };

/** A text block may carry citations (web search): streamed as citations_delta events, as the API does. */
export type FakeBlock = WireBlock | { type: "text"; text: string; citations: Citation[] };

export type Step =
  | {
      reply: { content: FakeBlock[]; stop_reason?: WireMessage["stop_reason"]; usage?: WireMessage["usage"] };
      /** Characters per text / input_json delta. */
      chunk?: number;
      /** Re-split the SSE bytes into network chunks of this many bytes (lines cut mid-way). */
      split_bytes?: number;
      /** Send an `error` event after this many events, then stop (a mid-stream failure). */
      error_after?: number;
      error_type?: string;
      /** Send this many events, then keep the connection open until the client goes away. */
      stall_after?: number;
      /** The answer to a structured-output request (output_config.format): queued apart from chat replies. */
      structured?: boolean;
    }
  | { status: 429 | 500 | 529 | 400 | 401; error_type?: string; message?: string };

const scripts = new Map<string, Step[]>();
const received = new Map<string, unknown[]>();

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

const defaultStep = (): Step => ({ reply: { content: [{ type: "text", text: "fake reply" }] } });

const cited = (b: FakeBlock | undefined): b is Extract<FakeBlock, { citations: Citation[] }> => b?.type === "text" && "citations" in b;

function withCitations(events: WireEvent[], content: FakeBlock[]): WireEvent[] {
  return events.flatMap((e) => {
    const block = e.type === "content_block_start" && typeof e.index === "number" ? content[e.index] : undefined;
    if (!cited(block)) return [e];
    return [e, ...block.citations.map((citation) => ({ type: "content_block_delta", index: e.index, delta: { type: "citations_delta", citation } }))];
  });
}

function stream(events: WireEvent[], step: Extract<Step, { reply: unknown }>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let frames = events.map(sseFrame);
  if (step.error_after !== undefined) {
    frames = [...frames.slice(0, step.error_after), sseFrame(errorEvent(step.error_type ?? "overloaded_error", "Overloaded"))];
  }
  if (step.stall_after !== undefined) frames = frames.slice(0, step.stall_after);
  const bytes = encoder.encode(frames.join(""));
  const size = step.split_bytes ?? bytes.length;
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset < bytes.length) {
        controller.enqueue(bytes.slice(offset, offset + size));
        offset += size;
        return;
      }
      if (step.stall_after === undefined) return controller.close();
      // Stalled: hold the connection open (a pending timer, so the runtime does not call it a hang)
      // until the client aborts; then the stream is cancelled.
      return new Promise<void>((resolve) => setTimeout(resolve, 30_000)).then(() => controller.close());
    },
  });
}

async function messages(request: Request): Promise<Response> {
  const auth = request.headers.get("x-api-key") ?? request.headers.get("authorization");
  if (!auth) return Response.json({ type: "error", error: { type: "authentication_error", message: "missing api key" } }, { status: 401 });
  const body = (await request.json()) as StructuredRequest & { stream?: boolean; metadata?: { user_id?: string }; messages: unknown[] };
  const key = body.metadata?.user_id ?? "default";
  received.set(key, [...(received.get(key) ?? []), body]);
  const invalid = forcedToolChoiceError(body) ?? formatError(body);
  if (invalid) return Response.json({ type: "error", error: { type: "invalid_request_error", message: invalid } }, { status: 400 });
  const structured = body.output_config?.format ? structuredQueue(key) : undefined;
  const step = (structured ? scripts.get(structured)?.shift() : scripts.get(key)?.shift()) ?? (structured ? { reply: { content: [{ type: "text" as const, text: defaultStructuredText(body) }] } } : defaultStep());
  const requestId = `req_fake_${crypto.randomUUID()}`;
  if ("status" in step) {
    const type = step.error_type ?? ERROR_TYPES[step.status] ?? "api_error";
    return Response.json(
      { type: "error", error: { type, message: step.message ?? type } },
      { status: step.status, headers: { "request-id": requestId, "retry-after-ms": "1", "x-should-retry": step.status >= 429 ? "true" : "false" } },
    );
  }
  const content = step.reply.content;
  const msg: WireMessage = {
    id: `msg_fake_${crypto.randomUUID().slice(0, 8)}`,
    model: body.model,
    content,
    stop_reason: step.reply.stop_reason ?? (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn"),
    usage: step.reply.usage ?? { input_tokens: approxTokens(JSON.stringify(body.messages)), output_tokens: approxTokens(JSON.stringify(content)) },
  };
  if (!body.stream) return Response.json(messageJson(msg), { headers: { "request-id": requestId } });
  return new Response(stream(withCitations(messageEvents(msg, step.chunk ?? 7), content), step), {
    headers: { "content-type": "text/event-stream", "request-id": requestId },
  });
}

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/v1/messages" && request.method === "POST") return messages(request);
    if (url.pathname === "/__script" && request.method === "POST") {
      const { key, steps } = (await request.json()) as { key: string; steps: Step[] };
      for (const step of steps) {
        const queue = "reply" in step && step.structured ? structuredQueue(key) : key;
        scripts.set(queue, [...(scripts.get(queue) ?? []), step]);
      }
      return Response.json({ queued: scripts.get(key)?.length ?? 0 });
    }
    if (url.pathname === "/__requests") return Response.json(received.get(url.searchParams.get("key") ?? "default") ?? []);
    return Response.json({ type: "error", error: { type: "not_found_error", message: url.pathname } }, { status: 404 });
  },
};
