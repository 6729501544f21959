/**
 * Evidence: the documents context providers give a turn (retrieved facts), sent to the model as `search_result`
 * blocks with citations on, so an answer that uses one cites it and the client learns which
 * (https://platform.claude.com/docs/en/build-with-claude/search-results). A document is named by its source,
 * `engram:<kind>:<id>` (lib/evidence-source.ts); a citation is trusted only when it names one of the turn's own
 * documents, never because of what its source says.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { evidenceSource, parseEvidenceSource } from "../lib/evidence-source";
import { documentText } from "../lib/prompt-text";
import type { EvidenceDocument } from "./context";
import type { CitedSource } from "./events";

export type EvidenceBlock = Anthropic.SearchResultBlockParam;

/** The document as the model gets it; null when nothing readable is left of its text. */
export function evidenceBlock(doc: EvidenceDocument): EvidenceBlock | null {
  const text = documentText(doc.text);
  if (!text) return null;
  return {
    type: "search_result",
    source: evidenceSource(doc),
    title: documentText(doc.title) || doc.kind,
    content: [{ type: "text", text }],
    // The API requires citations on every search result once web search is attached (it is, to every turn).
    citations: { enabled: true },
  };
}

/** What a block costs the prompt budget, in characters. */
export const evidenceChars = (b: EvidenceBlock) => b.title.length + b.content.reduce((n, c) => n + c.text.length, 0);

/** A citation of one of engram's documents (of this turn or of an earlier one). */
export const citesEvidence = (c: { type: string; source?: string }) => c.type === "search_result_location" && parseEvidenceSource(c.source ?? "") !== null;

/** The turn's documents a text block cites, each once, in citation order. Citations of anything else are not evidence. */
export function citedEvidence(citations: readonly Anthropic.TextCitation[] | null | undefined, evidence: readonly EvidenceBlock[]): CitedSource[] {
  const out: CitedSource[] = [];
  for (const c of citations ?? []) {
    if (c.type !== "search_result_location" || out.some((o) => evidenceSource(o) === c.source)) continue;
    if (!evidence.some((b) => b.source === c.source)) continue;
    const doc = parseEvidenceSource(c.source);
    if (doc) out.push({ ...doc, cited_text: c.cited_text });
  }
  return out;
}
