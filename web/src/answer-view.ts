import { h } from "./dom";
import { type CitedFact, UsedMemory } from "./used-memory";

/** One assistant answer on screen: text paragraphs with tool actions between them, and the memory it used. */
export class AnswerView {
  readonly el = h("article", { class: "msg assistant", "aria-label": "Assistant" });
  #para: HTMLParagraphElement | null = null;
  #used: UsedMemory | null = null;
  #thought: HTMLElement | null = null;
  readonly #tools = new Map<string, HTMLElement>();
  readonly reasons = new Map<string, string>();

  /** A delta that opens with a blank line starts a new block of the reply (the stream separates them so): a new paragraph. */
  text(delta: string): void {
    this.#thought = null;
    const block = delta.startsWith("\n\n");
    if (!this.#para || block) this.#para = this.#add(h("p", { class: "text" }));
    this.#para.textContent += block ? delta.slice(2) : delta;
  }

  /** Progress the model writes between tool calls (readable thinking), shown apart from the reply. */
  thinking(delta: string): void {
    if (!this.#thought) {
      this.#thought = this.note("", "progress");
      this.#thought.setAttribute("aria-label", "Thinking");
    }
    this.#thought.textContent += delta;
  }

  /** The next text starts a new paragraph (a tool call or a stored reply's end came between). */
  endParagraph(): void {
    this.#para = null;
  }

  note(text: string, cls = "note"): HTMLElement {
    this.#para = null;
    this.#thought = null;
    return this.#add(h("div", { class: cls }, text));
  }

  /** The remembered facts the answer cites: listed once each under the answer's text, however many parts cite them. */
  cite(facts: readonly CitedFact[]): void {
    if (!facts.length) return;
    if (!this.#used) {
      this.#used = new UsedMemory();
      this.el.append(this.#used.el);
    }
    this.#used.add(facts);
  }

  /** The answer's own content goes above the "Used memory" line, which stays under it. */
  #add<T extends HTMLElement>(node: T): T {
    return this.el.insertBefore(node, this.#used?.el ?? null);
  }

  toolUse(id: string, name: string, reason: string): void {
    this.reasons.set(id, reason);
    this.#tools.set(id, this.note(`${reason || "Using a tool"} (${name})`, "tool"));
  }

  /** A call's outcome on its line; `saved` (a conversation read back) goes right under it, where it showed live. */
  toolResult(id: string, ok: boolean, saved?: string): void {
    const el = this.#tools.get(id);
    if (!el) return;
    el.append(h("span", { class: ok ? "ok" : "failed" }, ok ? " ✓" : " ✗ failed"));
    if (saved) el.after(h("div", { class: "saved" }, saved));
  }

  error(message: string): void {
    this.note(message, "error").setAttribute("role", "alert");
  }
}

const NOTED: Record<string, string> = {
  observation: "Noted: it will be part of what it knows about you shortly",
  connection: "Updated a connection",
};

/** Where a memory tool saved, in words ("Saved to MEMORY"): the live stream and a reopened turn say it alike. */
export const savedWords = (target: string): string =>
  NOTED[target] ?? (/^(soul|bible|memory|heartbeat)$/.test(target) ? `Saved to ${target.toUpperCase()}` : `Saved (${target})`);
