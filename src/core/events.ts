/** The chat stream's events (docs/api.md lists them). A stream always ends with `done`, `tool_pending` or `error`. */
import { z } from "@hono/zod-openapi";
import { type TokenUsage, webSearches } from "../config/models";

export const McpRef = z.object({ server: z.string(), tool: z.string() });

/** A tool call the turn is waiting on. */
export const PendingCall = z
  .object({
    call_id: z.string(),
    tool_name: z.string(),
    tool_input: z.unknown(),
    /** server: a builtin waiting for approval; client: the client runs it (after asking, if needs_approval). */
    runs: z.enum(["server", "client"]),
    needs_approval: z.boolean(),
    mcp: McpRef.optional(),
  })
  .openapi("PendingCall");
export type PendingCall = z.infer<typeof PendingCall>;

/** A turn's token usage, summed over its model calls; the cache fields say how much of the input the prompt cache served. */
export const UsageSchema = z
  .object({
    input_tokens: z.number(),
    output_tokens: z.number(),
    cache_read_input_tokens: z.number().default(0),
    cache_creation_input_tokens: z.number().default(0),
    web_search_requests: z.number().default(0).describe("web searches the model ran (each billed by the API on top of the tokens)"),
  })
  .openapi("Usage");
export type Usage = z.infer<typeof UsageSchema>;

export const zeroUsage = (): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  web_search_requests: 0,
});

/** Adds one model call's usage, or a sum of them (the SDK reports absent cache fields as null). */
export function addUsage(total: Usage, u: TokenUsage): Usage {
  return {
    input_tokens: total.input_tokens + u.input_tokens,
    output_tokens: total.output_tokens + u.output_tokens,
    cache_read_input_tokens: total.cache_read_input_tokens + (u.cache_read_input_tokens ?? 0),
    cache_creation_input_tokens: total.cache_creation_input_tokens + (u.cache_creation_input_tokens ?? 0),
    web_search_requests: (total.web_search_requests ?? 0) + webSearches(u),
  };
}

/**
 * The end of a suspended turn. `call_id` / `tool_name` / `tool_input` name the first pending
 * call; `pending_calls` lists all of them (parallel calls are pending together).
 */
export const ToolPendingEnvelope = z
  .object({
    tool_pending: z.literal(true),
    session_id: z.string(),
    call_id: z.string(),
    tool_name: z.string(),
    tool_input: z.unknown(),
    model: z.string(),
    agentic: z.literal(true),
    tools_used: z.array(z.string()),
    pending_calls: z.array(PendingCall),
    expires_at: z.number().describe("epoch ms after which the continuation is gone (410 continuation_expired)"),
  })
  .openapi("ToolPending");
export type ToolPendingEnvelope = z.infer<typeof ToolPendingEnvelope>;

/** A document of the turn's evidence (a retrieved fact) that the reply cites, and the text it quotes from it. */
export type CitedSource = { kind: string; id: string; cited_text: string };

export type ChatEvent =
  | { type: "session"; id: string }
  | { type: "text"; delta: string }
  /** Readable thinking: summaries and the progress notes the model writes between tool calls. */
  | { type: "thinking"; delta: string }
  /** The model declined (safety classifiers); the turn is not kept in history and the session goes on. */
  | { type: "refusal"; category: string | null; explanation: string | null }
  /** Something the client should show, e.g. `truncated` when max_tokens cut the reply or a tool call, `interrupted` (docs/api.md). */
  | { type: "notice"; code: string; message: string }
  | { type: "tool_use"; id: string; name: string; input: unknown; reason: string }
  | { type: "tool_result"; id: string; name: string; ok: boolean }
  | { type: "memory_saved"; target: string; version?: number; entry_id?: string; truncated?: boolean }
  | { type: "memory_pending"; proposal_id: string; target: string; diff: string }
  /** A web search result the reply cites. */
  | { type: "citation"; url: string; title: string | null; cited_text: string | null }
  /** The turn's evidence a block of the reply cites (each document once), sent once that block's text is out. */
  | { type: "citations"; cited: CitedSource[] }
  | ({ type: "tool_pending" } & ToolPendingEnvelope)
  | { type: "done"; stop_reason: string; usage: Usage; tools_used: string[] }
  | { type: "error"; code: string; message: string };

/** Every event type once: the record's type makes the list exactly ChatEvent's (test/docs-lists.test.ts holds the docs to it). */
const EVENT_TYPES: Record<ChatEvent["type"], true> = {
  session: true,
  text: true,
  thinking: true,
  refusal: true,
  notice: true,
  tool_use: true,
  tool_result: true,
  memory_saved: true,
  memory_pending: true,
  citation: true,
  citations: true,
  tool_pending: true,
  done: true,
  error: true,
};
export const CHAT_EVENT_TYPES = Object.keys(EVENT_TYPES) as ChatEvent["type"][];

export const isTerminal = (e: ChatEvent) => e.type === "done" || e.type === "error" || e.type === "tool_pending";

/** One event as an SSE frame: its `id` (when given), `event: <type>` and the JSON payload without the type. */
export function sseFrame(event: ChatEvent, id?: string): string {
  const { type, ...data } = event;
  return `${id ? `id: ${id}\n` : ""}event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

const encoder = new TextEncoder();
export const ndjson = (event: ChatEvent) => encoder.encode(`${JSON.stringify(event)}\n`);

/** Splits a byte stream of NDJSON into events. */
export function parseNdjson(): TransformStream<Uint8Array, ChatEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  return new TransformStream({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line) controller.enqueue(JSON.parse(line) as ChatEvent);
      }
    },
    flush(controller) {
      if (buffer.trim()) controller.enqueue(JSON.parse(buffer) as ChatEvent);
    },
  });
}

/**
 * A reply's text arrives in blocks, and a client joins the deltas. Where another event separates two blocks (a tool
 * call, thinking, a notice: the text of a later model call), the first delta of the later block starts with a blank
 * line, unless either side already has whitespace there. Citations separate nothing: a cited sentence arrives as
 * several blocks that belong together. Stateful: one per reader, fed every event in order.
 */
export function paragraphBreaks(): (event: ChatEvent) => ChatEvent {
  let last = "";
  let split = false;
  return (event) => {
    if (event.type !== "text") {
      if (last && event.type !== "citation" && event.type !== "citations") split = true;
      return event;
    }
    if (!event.delta) return event;
    const delta = split && !/\s$/.test(last) && !/^\s/.test(event.delta) ? `\n\n${event.delta}` : event.delta;
    split = false;
    last = delta;
    return delta === event.delta ? event : { ...event, delta };
  };
}

/** The turn's text, its blocks separated as in the stream (`paragraphBreaks`). */
export function replyText(events: readonly ChatEvent[]): string {
  const breaks = paragraphBreaks();
  let reply = "";
  for (const e of events) {
    const out = breaks(e);
    if (out.type === "text") reply += out.delta;
  }
  return reply;
}

/** The JSON body of a `stream: false` turn: the same turn, collected. */
export function collectTurn(events: ChatEvent[]) {
  const end = events.at(-1);
  const reply = replyText(events);
  // Deltas are collected, not listed: the reply as one string; thinking text is a stream-only aid.
  const body = { session_id: events.find((e) => e.type === "session")?.id, reply, events: events.filter((e) => e.type !== "text" && e.type !== "thinking") };
  if (end?.type === "tool_pending") {
    const { type: _t, ...envelope } = end;
    return { ...body, ...envelope };
  }
  if (end?.type === "done") return { ...body, stop_reason: end.stop_reason, usage: end.usage, tools_used: end.tools_used };
  return body;
}
