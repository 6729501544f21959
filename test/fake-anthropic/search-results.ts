/**
 * `search_result` blocks as the API takes them and cites them
 * (https://platform.claude.com/docs/en/build-with-claude/search-results): the schema and where a block may sit
 * are checked like the API does (a 400 before any output), and a scripted reply cites a search result by its
 * index, the fake filling in the rest of the `search_result_location` from the request, as the API does.
 */
import type { WireCitation } from "../../src/model/wire";
import { type ApiRequest, type Block, blocksOf, type Json } from "./prefix";

const FIELDS = new Set(["type", "source", "title", "content", "citations", "cache_control"]);

type Found = { block: Block; path: string };

/** Every `search_result` block of the request, in order across messages and tool results (how citations count them). */
export function searchResults(req: ApiRequest): Found[] {
  const out: Found[] = [];
  req.messages.forEach((m, mi) =>
    blocksOf(m.content).forEach((b, bi) => {
      const path = `messages.${mi}.content.${bi}`;
      if (b.type === "search_result") out.push({ block: b, path });
      if (b.type === "tool_result" && Array.isArray(b.content))
        b.content.forEach((c, ci) => {
          if (isObject(c) && c.type === "search_result") out.push({ block: c, path: `${path}.content.${ci}` });
        });
    }),
  );
  return out;
}

const isObject = (v: Json | undefined): v is { [k: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v);

/** What is wrong with one block, by the documented schema (required fields, non-empty text blocks, no others). */
function blockError(b: Block, path: string): string | null {
  const at = `${path}.search_result`;
  for (const field of ["source", "title", "content"]) if (!(field in b)) return `${at}.${field}: Field required`;
  if (typeof b.source !== "string") return `${at}.source: Input should be a valid string`;
  if (typeof b.title !== "string") return `${at}.title: Input should be a valid string`;
  if (!Array.isArray(b.content)) return `${at}.content: Input should be a valid list`;
  if (b.content.length === 0) return `${at}.content: List should have at least 1 item after validation, not 0`;
  for (const [i, c] of b.content.entries()) {
    if (!isObject(c) || c.type !== "text") return `${at}.content.${i}: search results hold text blocks only`;
    if (typeof c.text !== "string") return `${at}.content.${i}.text: Input should be a valid string`;
    if (c.text === "") return `${at}.content.${i}.text: text content blocks must be non-empty`;
  }
  if (b.citations !== undefined && (!isObject(b.citations) || (b.citations.enabled !== undefined && typeof b.citations.enabled !== "boolean")))
    return `${at}.citations.enabled: Input should be a valid boolean`;
  const extra = Object.keys(b).find((k) => !FIELDS.has(k));
  return extra ? `${at}.${extra}: Extra inputs are not permitted` : null;
}

const enabled = (b: Block) => isObject(b.citations) && b.citations.enabled === true;

/** Why the API would reject the request's search results (the "Limitations" and "Citation control" rules), or null. */
export function searchResultError(req: ApiRequest): string | null {
  for (const [mi, m] of req.messages.entries()) {
    if (m.role !== "assistant") continue;
    const at = blocksOf(m.content).findIndex((b) => b.type === "search_result");
    if (at >= 0) return `messages.${mi}.content.${at}: \`search_result\` blocks can only appear in user messages`;
  }
  const found = searchResults(req);
  for (const { block, path } of found) {
    const wrong = blockError(block, path);
    if (wrong) return wrong;
  }
  const on = found.filter((f) => enabled(f.block)).length;
  if (on !== 0 && on !== found.length) return "Citations must be enabled on all search results or on none of them";
  const webSearch = (req.tools ?? []).some((t) => typeof t.type === "string" && t.type.startsWith("web_search"));
  if (webSearch && found.length && on === 0) return "When the web search tool is enabled, citations must be enabled on all search_result blocks";
  return null;
}

/** How a script cites: the index among the request's search results, and which of its content blocks (default: all). */
export type Cite = { search_result: number; start_block_index?: number; end_block_index?: number };

/** The citation the API returns for `cite`, or why the script cannot cite it (a test written wrong). */
export function citationFor(req: ApiRequest, cite: Cite): WireCitation | string {
  const found = searchResults(req);
  const block = found[cite.search_result]?.block;
  if (!block || !Array.isArray(block.content)) return `the script cites search result ${cite.search_result}; the request has ${found.length}`;
  if (!enabled(block)) return `the script cites search result ${cite.search_result}, whose citations are not enabled`;
  const start = cite.start_block_index ?? 0;
  const end = cite.end_block_index ?? block.content.length;
  const texts = block.content.slice(start, end).map((c) => (isObject(c) ? String(c.text) : ""));
  if (start < 0 || end <= start || end > block.content.length)
    return `the script cites blocks ${start}..${end} of a search result with ${block.content.length}`;
  return {
    type: "search_result_location",
    source: String(block.source),
    title: typeof block.title === "string" ? block.title : null,
    cited_text: texts.join(""),
    search_result_index: cite.search_result,
    start_block_index: start,
    end_block_index: end,
  };
}
