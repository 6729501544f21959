/**
 * What the offline model makes of the memory recalled for a turn (`search_result` blocks, lib/evidence-source.ts): the
 * facts it may name (to forget them), and an answer that cites the ones the message is about, as Claude cites a
 * search result (https://platform.claude.com/docs/en/build-with-claude/search-results).
 */
import { parseEvidenceSource } from "../lib/evidence-source";
import type { ShownFact } from "./offline-rule";
import { bestMatches } from "./offline-words";
import type { WireBlock } from "./wire";

type Block = { type: string; source?: unknown; title?: unknown; content?: unknown };
type Msg = { role: "user" | "assistant"; content: string | Block[] };

/** A search result of the request: its place among all of them (how a citation names it), source, title, texts. */
export type Recalled = { index: number; source: string; title: string; texts: string[] };

const textsOf = (content: unknown): string[] =>
  Array.isArray(content) ? content.flatMap((c: { type?: unknown; text?: unknown }) => (c?.type === "text" && typeof c.text === "string" ? [c.text] : [])) : [];

/** Every search result of the request, in order across messages and tool results, as the API counts them. */
export function recalledResults(messages: readonly Msg[]): Recalled[] {
  const found: Block[] = [];
  for (const m of messages) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) {
      if (b.type === "search_result") found.push(b);
      if (b.type === "tool_result" && Array.isArray(b.content)) found.push(...(b.content as Block[]).filter((c) => c?.type === "search_result"));
    }
  }
  return found.map((b, index) => ({ index, source: String(b.source ?? ""), title: String(b.title ?? ""), texts: textsOf(b.content) }));
}

/** The recalled facts, by the id their source names. */
export const shownFacts = (recalled: readonly Recalled[]): ShownFact[] =>
  recalled.flatMap((r) => {
    const doc = parseEvidenceSource(r.source);
    return doc?.kind === "fact" ? [{ id: doc.id, text: r.texts.join(" ") }] : [];
  });

/** At most this many facts in one answer. */
const MAX_CITED = 3;

/**
 * Text blocks that quote the recalled results sharing the most of the message's words, each citing its result
 * (whole); none when no result shares a word with it.
 */
export function citedRecall(said: string, recalled: readonly Recalled[]): WireBlock[] {
  const matches = bestMatches(
    said,
    recalled.map((r) => ({ ...r, text: r.texts.join(" ") })),
  ).slice(0, MAX_CITED);
  if (!matches.length) return [];
  // On a line of its own: the greeting before it may end with a list of what MEMORY holds.
  const blocks: WireBlock[] = [{ type: "text", text: "\nWhat I remember that fits: " }];
  matches.forEach((r, i) => {
    if (i > 0) blocks.push({ type: "text", text: "; " });
    const citation = {
      type: "search_result_location" as const,
      source: r.source,
      title: r.title,
      cited_text: r.texts.join(""),
      search_result_index: r.index,
      start_block_index: 0,
      end_block_index: r.texts.length,
    };
    blocks.push({ type: "text", text: `“${r.text}”`, citations: [citation] });
  });
  blocks.push({ type: "text", text: "." });
  return blocks;
}
