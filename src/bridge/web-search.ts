/**
 * Anthropic's native web search: a server tool Anthropic runs, attached to every chat turn (no user
 * toggle; max_uses caps it). Its server_tool_use and web_search_tool_result blocks stay in the
 * assistant message unchanged; the client sees the search as tool_use / tool_result events and
 * every web citation as a `citation` event.
 * https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { ChatEvent } from "../core/events";

export const WEB_SEARCH_TOOL = {
  type: "web_search_20250305",
  name: "web_search",
  max_uses: 5,
} as const satisfies Anthropic.WebSearchTool20250305;

const queryOf = (input: unknown) => (typeof input === "object" && input !== null && "query" in input && typeof input.query === "string" ? input.query : null);

/**
 * Client events for one Messages stream event. `snapshot` is the message accumulated so far, which
 * holds a block's complete input once its `content_block_stop` arrives.
 */
export function serverToolEvents(event: Anthropic.MessageStreamEvent, snapshot: Anthropic.Message | undefined): ChatEvent[] {
  if (event.type === "content_block_delta" && event.delta.type === "citations_delta") {
    const c = event.delta.citation;
    return c.type === "web_search_result_location" ? [{ type: "citation", url: c.url, title: c.title, cited_text: c.cited_text }] : [];
  }
  if (event.type !== "content_block_stop") return [];
  const block = snapshot?.content[event.index];
  if (block?.type === "server_tool_use") {
    const query = queryOf(block.input);
    const reason = block.name === "web_search" && query ? `Searching the web for "${query}"` : `Using ${block.name}`;
    return [{ type: "tool_use", id: block.id, name: block.name, input: block.input, reason }];
  }
  if (block?.type === "web_search_tool_result") {
    return [{ type: "tool_result", id: block.tool_use_id, name: "web_search", ok: Array.isArray(block.content) }];
  }
  return [];
}
