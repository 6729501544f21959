/**
 * "Used memory": the remembered facts an answer cites, under the answer, each a link that opens the fact in
 * Memory → Facts. Live from the `citations` event; on a reload from the citations the stored reply kept.
 */
import { parseEvidenceSource } from "../../src/lib/evidence-source";
import { h } from "./dom";

export type CitedFact = { id: string; text: string };

type Citation = { type?: unknown; source?: unknown; cited_text?: unknown };

/** The facts of a `citations` event's `cited` list (other kinds of document are not memory a user can open). */
export function citedFacts(cited: unknown): CitedFact[] {
  if (!Array.isArray(cited)) return [];
  return cited.flatMap((c: { kind?: unknown; id?: unknown; cited_text?: unknown }) =>
    c?.kind === "fact" && typeof c.id === "string" ? [{ id: c.id, text: String(c.cited_text ?? "") }] : [],
  );
}

/** The facts a stored text block's citations name (`search_result_location`, source `engram:fact:<id>`). */
export function storedCitedFacts(citations: unknown): CitedFact[] {
  if (!Array.isArray(citations)) return [];
  return citations.flatMap((c: Citation) => {
    const doc = c?.type === "search_result_location" && typeof c.source === "string" ? parseEvidenceSource(c.source) : null;
    return doc?.kind === "fact" ? [{ id: doc.id, text: String(c.cited_text ?? "") }] : [];
  });
}

/** The disclosure: one line per fact, each fact once, in the order the answer first cited it. */
export class UsedMemory {
  #list = h("ul", { class: "used-memory-list" });
  #summary = h("summary", null);
  #ids = new Set<string>();
  readonly el = h("details", { class: "used-memory" }, this.#summary, this.#list);

  add(facts: readonly CitedFact[]): void {
    for (const f of facts) {
      if (this.#ids.has(f.id)) continue;
      this.#ids.add(f.id);
      this.#list.append(
        h("li", null, h("a", { href: `#memory/facts/${encodeURIComponent(f.id)}`, title: "Open this fact in Memory → Facts" }, f.text || f.id)),
      );
    }
    this.#summary.textContent = `Used memory (${this.#ids.size} ${this.#ids.size === 1 ? "fact" : "facts"})`;
  }
}
