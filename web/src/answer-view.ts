import { h } from "./dom";

/** One assistant answer on screen: text paragraphs with tool actions between them. */
export class AnswerView {
  readonly el = h("article", { class: "msg assistant", "aria-label": "Assistant" });
  private para: HTMLParagraphElement | null = null;
  private thought: HTMLElement | null = null;
  private readonly tools = new Map<string, HTMLElement>();
  readonly reasons = new Map<string, string>();

  text(delta: string): void {
    this.thought = null;
    if (!this.para) this.para = this.el.appendChild(h("p", { class: "text" }));
    this.para.textContent += delta;
  }

  /** Progress the model writes between tool calls (readable thinking), shown apart from the reply. */
  thinking(delta: string): void {
    if (!this.thought) {
      this.thought = this.note("", "progress");
      this.thought.setAttribute("aria-label", "Thinking");
    }
    this.thought.textContent += delta;
  }

  note(text: string, cls = "note"): HTMLElement {
    this.para = null;
    this.thought = null;
    return this.el.appendChild(h("div", { class: cls }, text));
  }

  toolUse(id: string, name: string, reason: string): void {
    this.reasons.set(id, reason);
    this.tools.set(id, this.note(`${reason || "Using a tool"} (${name})`, "tool"));
  }

  toolResult(id: string, ok: boolean): void {
    const el = this.tools.get(id);
    if (el) el.append(h("span", { class: ok ? "ok" : "failed" }, ok ? " ✓" : " ✗ failed"));
  }

  error(message: string): void {
    this.note(message, "error").setAttribute("role", "alert");
  }
}

export const SAVED: Record<string, string> = {
  soul: "Saved to SOUL",
  bible: "Saved to BIBLE",
  memory: "Saved to MEMORY",
  heartbeat: "Saved to HEARTBEAT",
  observation: "Noted: it will be part of what it knows about you shortly",
  connection: "Updated a connection",
};
