/**
 * The Messages API streaming wire format, written once and used by the offline model and by the
 * test fake: a complete assistant message becomes the exact event sequence the real API sends
 * (message_start, content_block_start/delta/stop, ping, message_delta with usage, message_stop).
 * https://docs.anthropic.com/en/api/messages-streaming
 */
/**
 * A citation on a text block: a web search result the reply cites, or one of the request's `search_result`
 * blocks (https://platform.claude.com/docs/en/build-with-claude/search-results, "Citation fields").
 */
export type WireCitation =
  | { type: "web_search_result_location"; url: string; title: string | null; cited_text: string; encrypted_index: string }
  | {
      type: "search_result_location";
      source: string;
      title: string | null;
      /** The text of `content[start_block_index:end_block_index]` of the cited search result, joined. */
      cited_text: string;
      /** Among every `search_result` block of the request, in order across messages and tool results. */
      search_result_index: number;
      start_block_index: number;
      /** Exclusive. */
      end_block_index: number;
    };

export type WireBlock =
  | { type: "text"; text: string; citations?: WireCitation[] }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "server_tool_use"; id: string; name: string; input: unknown }
  | { type: "web_search_tool_result"; tool_use_id: string; content: unknown };

export type WireMessage = {
  id: string;
  model: string;
  content: WireBlock[];
  stop_reason: "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "pause_turn" | "refusal" | "model_context_window_exceeded";
  stop_details?: { type: "refusal"; category: string | null; explanation: string | null } | null;
  usage: WireUsage;
  /** A tool_use input cut mid-JSON, as a reply stopped by max_tokens sends it. */
  truncatedJson?: boolean;
};

export type WireUsage = {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  /** Present when the message ran server tools: how many web searches it made. */
  server_tool_use?: { web_search_requests: number };
};

export type WireEvent = { type: string; [k: string]: unknown };

/** Splits a string into pieces of at most `size` characters (at least one piece). */
export function chunks(s: string, size: number): string[] {
  if (s.length === 0) return [""];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

/** The event sequence of one streamed message. `chunk` sets the size of text and JSON deltas. */
export function messageEvents(msg: WireMessage, chunk = 16): WireEvent[] {
  const events: WireEvent[] = [
    {
      type: "message_start",
      message: {
        id: msg.id,
        type: "message",
        role: "assistant",
        model: msg.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: msg.usage.input_tokens,
          output_tokens: 1,
          cache_creation_input_tokens: msg.usage.cache_creation_input_tokens ?? 0,
          cache_read_input_tokens: msg.usage.cache_read_input_tokens ?? 0,
        },
      },
    },
  ];
  msg.content.forEach((block, index) => {
    if (index === 0) events.push({ type: "ping" });
    if (block.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const text of chunks(block.text, chunk)) {
        events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
      }
      // Each citation is one `citations_delta`, after the text it supports (the Citations page, "Streaming support").
      for (const citation of block.citations ?? []) events.push({ type: "content_block_delta", index, delta: { type: "citations_delta", citation } });
    } else if (block.type === "thinking") {
      // Text (none when display is omitted), then the signature just before the block stops.
      events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
      if (block.thinking)
        for (const thinking of chunks(block.thinking, chunk)) events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } });
      events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (block.type === "tool_use" || block.type === "server_tool_use") {
      events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
      const json = JSON.stringify(block.input ?? {});
      const cut = msg.truncatedJson && index === msg.content.length - 1 ? json.slice(0, Math.max(1, Math.floor(json.length / 2))) : json;
      for (const partial_json of chunks(cut, chunk)) {
        events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } });
      }
    } else {
      events.push({ type: "content_block_start", index, content_block: block });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: msg.stop_reason, stop_sequence: null, stop_details: msg.stop_details ?? null },
      usage: {
        output_tokens: msg.usage.output_tokens,
        input_tokens: msg.usage.input_tokens,
        cache_creation_input_tokens: msg.usage.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: msg.usage.cache_read_input_tokens ?? 0,
        ...(msg.usage.server_tool_use ? { server_tool_use: msg.usage.server_tool_use } : {}),
      },
    },
    { type: "message_stop" },
  );
  return events;
}

export const sseFrame = (event: WireEvent) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

export const errorEvent = (type: string, message: string): WireEvent => ({ type: "error", error: { type, message } });

/** The non-streaming body of the same message. */
export const messageJson = (msg: WireMessage) => ({
  id: msg.id,
  type: "message",
  role: "assistant",
  model: msg.model,
  content: msg.content,
  stop_reason: msg.stop_reason,
  stop_sequence: null,
  stop_details: msg.stop_details ?? null,
  usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...msg.usage },
});

export function sseResponse(events: WireEvent[], requestId: string): Response {
  const body = events.map(sseFrame).join("");
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "request-id": requestId, "cache-control": "no-cache" },
  });
}
