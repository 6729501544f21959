/**
 * A fake of the Anthropic Messages API for tests, run as an auxiliary worker. The real SDK talks to
 * it over HTTP. It follows the current models' contract (docs/models.md): request rules per model
 * (rules.ts), thinking blocks signed and verified on the way back (thinking.ts), prompt-cache
 * accounting from cache_control breakpoints and prefix equality (cache.ts), refusals, truncated tool
 * calls and structured outputs. Tests script it turn by turn, per engram user (the request's
 * `metadata.user_id`), so test files running in parallel never see each other's turns.
 *
 *   POST /__script   {key, steps: Step[]}   queue the next responses for `key`
 *   GET  /__requests?key=                   the Messages requests received for `key`
 *   POST /v1/messages                       the API: JSON, or SSE when `stream: true`
 */
import { approxTokens } from "../../src/lib/text";
import { errorEvent, messageEvents, messageJson, sseFrame, type WireBlock, type WireMessage } from "../../src/model/wire";
import { account } from "./cache";
import { type ApiRequest, type Block, type Json, sequence, sign } from "./prefix";
import { thinkingMode, validate } from "./rules";
import { type Cite, citationFor } from "./search-results";
import { defaultStructuredText, formatError, type StructuredRequest, structuredQueue } from "./structured";
import { remember, verifyThinking } from "./thinking";

/**
 * A scripted block. Thinking blocks are written without a signature: the fake signs them, and returns
 * their text only when the request asked for `display: "summarized"`. A text block `cites` the request's
 * search results by index; the fake writes the citations the API would (search-results.ts).
 */
export type FakeBlock =
  | Exclude<WireBlock, { type: "thinking" } | { type: "redacted_thinking" }>
  | { type: "text"; text: string; cites: Cite[] }
  | { type: "thinking"; thinking: string }
  | { type: "redacted_thinking" };

export type Step =
  | {
      reply: {
        content?: FakeBlock[];
        /** Structured outputs: the JSON the text block carries (default: an instance built from the schema). */
        json?: unknown;
        stop_reason?: WireMessage["stop_reason"];
        stop_details?: WireMessage["stop_details"];
        usage?: WireMessage["usage"];
        /** Do not add the thinking block a thinking model would write. */
        no_thinking?: boolean;
        /** Cut the last tool_use block's input JSON in half (with stop_reason max_tokens). */
        truncate_tool_input?: boolean;
      };
      /** Characters per text / input_json delta. */
      chunk?: number;
      /** Re-split the SSE bytes into network chunks of this many bytes (lines cut mid-way). */
      split_bytes?: number;
      /** Send an `error` event after this many events, then stop (a mid-stream failure). */
      error_after?: number;
      error_type?: string;
      /** Send this many events (a JSON reply: its headers only), then keep the connection open until the client goes away. */
      stall_after?: number;
      /** Send this many events, then close the connection as if it dropped: no `error` event, no `message_stop`. */
      drop_after?: number;
      /** The answer to a structured-output request (output_config.format): queued apart from chat replies. */
      structured?: boolean;
      /** Answer only after this many milliseconds (a model that takes its time). */
      delay_ms?: number;
    }
  /** An HTTP error; `structured`: for the next structured-output request (a background call) instead of a chat call. */
  | { status: 429 | 500 | 529 | 400 | 401; error_type?: string; message?: string; structured?: boolean };

const scripts = new Map<string, Step[]>();
const received = new Map<string, unknown[]>();

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "not_found_error",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/** The API counts the searches that returned results (a failed search comes back as an error object, and is not billed). */
function searches(content: Block[]): Pick<WireMessage["usage"], "server_tool_use"> {
  const n = content.filter((b) => b.type === "web_search_tool_result" && Array.isArray(b.content)).length;
  return n ? { server_tool_use: { web_search_requests: n } } : {};
}

function stream(events: ReturnType<typeof messageEvents>, step: Extract<Step, { reply: unknown }>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let frames = events.map(sseFrame);
  if (step.error_after !== undefined) {
    frames = [...frames.slice(0, step.error_after), sseFrame(errorEvent(step.error_type ?? "overloaded_error", "Overloaded"))];
  }
  if (step.stall_after !== undefined) frames = frames.slice(0, step.stall_after);
  if (step.drop_after !== undefined) frames = frames.slice(0, step.drop_after);
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
      return stalled().then(() => controller.close());
    },
  });
}

/**
 * A stalled reply holds the connection open (a pending timer, so the runtime does not call it a hang)
 * until the client aborts; then the body is cancelled.
 */
const stalled = () => new Promise<void>((resolve) => setTimeout(resolve, 30_000));

const error = (status: number, type: string, message: string, requestId: string) =>
  Response.json(
    { type: "error", error: { type, message }, request_id: requestId },
    { status, headers: { "request-id": requestId, "retry-after-ms": "1", "x-should-retry": status >= 429 ? "true" : "false" } },
  );

/** A value matching a JSON Schema, for structured-output replies nobody scripted. */
export function instanceOf(schema: Json): Json {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return null;
  if (Array.isArray(schema.enum)) return schema.enum[0] ?? null;
  if ("const" in schema) return schema.const ?? null;
  const options = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (Array.isArray(options)) return instanceOf(options[0] ?? null);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === "object") {
    const props = (schema.properties ?? {}) as Record<string, Json>;
    const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
    return Object.fromEntries(required.map((k) => [k, instanceOf(props[k] ?? null)]));
  }
  if (type === "array") return [];
  if (type === "string") return "";
  if (type === "number" || type === "integer") return typeof schema.minimum === "number" ? schema.minimum : 0;
  if (type === "boolean") return false;
  return null;
}

/** The step with every `cites` written out as the citations the API returns; a string when the script cites what is not there. */
function resolveCites(req: ApiRequest, step: Extract<Step, { reply: unknown }>): Extract<Step, { reply: unknown }> | string {
  const content: FakeBlock[] = [];
  for (const b of step.reply.content ?? []) {
    if (!("cites" in b)) {
      content.push(b);
      continue;
    }
    const citations = b.cites.map((c) => citationFor(req, c));
    const wrong = citations.find((c) => typeof c === "string");
    if (wrong !== undefined) return wrong;
    content.push({ type: "text", text: b.text, citations: citations.filter((c) => typeof c !== "string") });
  }
  return step.reply.content ? { ...step, reply: { ...step.reply, content } } : step;
}

/**
 * The reply's content as the API returns it: thinking added and signed, text shown per `display`; and the
 * output tokens it bills, which count the thinking whether or not its text is shown.
 */
function replyContent(
  req: ApiRequest,
  step: Extract<Step, { reply: unknown }>,
  scope: string,
  seq: ReturnType<typeof sequence>,
): { content: Block[]; outputTokens: number } {
  let blocks: FakeBlock[] = step.reply.content ?? [];
  const format = req.output_config?.format;
  if (format && (step.reply.json !== undefined || !step.reply.content)) {
    blocks = [...blocks, { type: "text", text: JSON.stringify(step.reply.json ?? instanceOf(format.schema ?? null)) }];
  }
  if (!step.reply.content && !format) blocks = [{ type: "text", text: "fake reply" }];
  const mode = thinkingMode(req);
  const last = req.messages.at(-1);
  const afterTools = typeof last?.content !== "string" && (last?.content ?? []).some((b) => b.type === "tool_result");
  const hasThinking = blocks.some((b) => b.type === "thinking" || b.type === "redacted_thinking");
  if (!hasThinking && !step.reply.no_thinking) {
    if (mode === "adaptive") blocks = [{ type: "thinking", thinking: "Working out what the user needs." }, ...blocks];
    else if (mode === "between_tools" && afterTools) blocks = [{ type: "thinking", thinking: "Got the tool result; continuing." }, ...blocks];
  }
  if (mode === "disabled") blocks = blocks.filter((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
  const summarized = req.thinking?.display === "summarized";
  const out: Block[] = [];
  let hidden = 0;
  blocks.forEach((b, i) => {
    let block: Block;
    if (b.type === "thinking") {
      const shown: Block = { type: "thinking", thinking: summarized ? b.thinking : "" };
      if (!summarized) hidden += approxTokens(b.thinking);
      block = { ...shown, signature: sign(scope, seq.hash, shown) };
    } else if (b.type === "redacted_thinking") {
      block = { type: "redacted_thinking", data: sign(scope, seq.hash, { type: "redacted_thinking" }) };
    } else {
      block = b as unknown as Block;
    }
    // A reply to a paused turn continues that assistant message.
    seq.push(block, `reply.${i}`, i, i === 0 && last?.role !== "assistant" ? "msg:assistant" : "blk");
    out.push(block);
  });
  return { content: out, outputTokens: approxTokens(JSON.stringify(out)) + hidden };
}

async function messages(request: Request): Promise<Response> {
  const requestId = `req_fake_${crypto.randomUUID()}`;
  const auth = request.headers.get("x-api-key") ?? request.headers.get("authorization");
  if (!auth) return error(401, "authentication_error", "missing api key", requestId);
  const body = (await request.json()) as ApiRequest;
  const key = body.metadata?.user_id ?? "default";
  received.set(key, [...(received.get(key) ?? []), body]);
  // Structured-output calls (background work) are scripted apart from the user's chat calls.
  const structured = (body as unknown as StructuredRequest).output_config?.format ? structuredQueue(key) : undefined;
  const queue = scripts.get(structured ?? key) ?? [];
  const next = queue[0];
  if (next && "status" in next) {
    queue.shift();
    return error(next.status, next.error_type ?? ERROR_TYPES[next.status] ?? "api_error", next.message ?? next.error_type ?? "error", requestId);
  }
  // A request the API rejects does not use up the scripted reply.
  const invalid = validate(body);
  if (invalid) return error(invalid.status, invalid.type, invalid.message, requestId);
  const badFormat = formatError(body as unknown as StructuredRequest);
  if (badFormat) return error(400, "invalid_request_error", badFormat, requestId);
  const scope = `${body.model}|${key}`;
  const seq = sequence(body, scope);
  const unverified = verifyThinking(body, seq, scope);
  if (unverified) return error(unverified.status, unverified.type, unverified.message, requestId);
  const fallback: Extract<Step, { reply: unknown }> = structured
    ? { reply: { content: [{ type: "text", text: defaultStructuredText(body as unknown as StructuredRequest) }] } }
    : { reply: {} };
  const step = (queue.shift() as Extract<Step, { reply: unknown }> | undefined) ?? fallback;
  const cache = account(seq, body.model);

  const cites = resolveCites(body, step);
  if (typeof cites === "string") return error(500, "api_error", `fake: ${cites}`, requestId);
  const { content, outputTokens } = replyContent(body, cites, scope, seq);
  remember(content);
  const stop_reason = step.reply.stop_reason ?? (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
  const msg: WireMessage = {
    id: `msg_fake_${crypto.randomUUID().slice(0, 8)}`,
    model: body.model,
    content: content as unknown as WireBlock[],
    stop_reason,
    stop_details: stop_reason === "refusal" ? (step.reply.stop_details ?? { type: "refusal", category: null, explanation: null }) : null,
    usage: step.reply.usage ?? { ...cache, output_tokens: outputTokens, ...searches(content) },
    ...(step.reply.truncate_tool_input ? { truncatedJson: true } : {}),
  };
  if (step.delay_ms) await new Promise<void>((resolve) => setTimeout(resolve, step.delay_ms));
  if (!body.stream && step.stall_after !== undefined)
    return new Response(new ReadableStream({ pull: (controller) => stalled().then(() => controller.close()) }), {
      headers: { "content-type": "application/json", "request-id": requestId },
    });
  if (!body.stream) return Response.json(messageJson(msg), { headers: { "request-id": requestId } });
  return new Response(stream(messageEvents(msg, step.chunk ?? 7), step), {
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
        const queue = step.structured ? structuredQueue(key) : key;
        scripts.set(queue, [...(scripts.get(queue) ?? []), step]);
      }
      return Response.json({ queued: scripts.get(key)?.length ?? 0 });
    }
    if (url.pathname === "/__requests") return Response.json(received.get(url.searchParams.get("key") ?? "default") ?? []);
    return Response.json({ type: "error", error: { type: "not_found_error", message: url.pathname } }, { status: 404 });
  },
};
