/**
 * A conversation read back from the server (`GET /v1/sessions/{id}`), drawn with the same AnswerView the live
 * stream fills: one answer per turn (the model's messages and the tool results between them), each tool line in
 * the words it streamed with (`tool_reasons`), what it saved, and one "What it was shown" under the turn.
 */
import { AnswerView, savedWords } from "./answer-view";
import { h } from "./dom";
import { storedCitedFacts } from "./used-memory";

type Block = {
  type: string;
  text?: string;
  thinking?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  is_error?: boolean;
  citations?: unknown;
};
export type Stored = { role: "user" | "assistant"; content: string | Block[]; created_at: number };

const blocksOf = (m: { content: unknown }): Block[] =>
  typeof m.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m.content) ? (m.content as Block[]) : [];

/**
 * Where a successful call of a memory tool saved, as its live `memory_saved` event named it: brain writes say
 * their target, observations are noted for consolidation.
 */
function savedBy(call: Block | undefined): string | undefined {
  if (call?.name === "update_customer_brain") return String((call.input as { target?: unknown } | undefined)?.target ?? "");
  if (call?.name === "record_observation" || call?.name === "update_user_context") return "observation";
  return undefined;
}

/** Draws one stored message into `view` (an assistant message, or the tool results a user message carries). */
export function drawInto(view: AnswerView, m: { role: string; content: unknown }, reasons: Record<string, string>, calls: Map<string, Block>): void {
  const blocks = blocksOf(m);
  blocks.forEach((b, i) => {
    if (b.type === "text" && b.text && m.role === "assistant") {
      view.text(b.text);
      view.cite(storedCitedFacts(b.citations));
      // Text blocks in a row are one reply (the API splits a reply where a citation starts or ends): one paragraph.
      if (blocks[i + 1]?.type !== "text") view.endParagraph();
    } else if (b.type === "thinking" && b.thinking) view.thinking(b.thinking);
    else if (b.type === "tool_use" && b.id && b.name) {
      calls.set(b.id, b);
      view.toolUse(b.id, b.name, reasons[b.id] ?? "");
    } else if (b.type === "tool_result" && b.tool_use_id) {
      const target = b.is_error ? undefined : savedBy(calls.get(b.tool_use_id));
      view.toolResult(b.tool_use_id, b.is_error !== true, target && savedWords(target));
    }
  });
}

/** A user message's own words: not the context block stored ahead of each message ("What it was shown" has it), nor tool results. */
const saidBy = (m: Stored): string[] =>
  blocksOf(m)
    .filter((b) => b.type === "text" && !(b.text ?? "").startsWith("<turn_context>"))
    .map((b) => b.text ?? "");

export type DrawnHistory = { nodes: HTMLElement[]; last: AnswerView | null; calls: Map<string, Block> };

/**
 * The whole history, a turn at a time. `after(view, at)` finishes each answer (its "What it was shown", for the
 * turn's last message time `at`), except the newest when `lastOpen` (a turn waiting on a tool). `last` is the
 * newest turn's answer, where a pending call's message goes.
 */
export function drawHistory(
  messages: readonly Stored[],
  reasons: Record<string, string>,
  after: (view: AnswerView, at: number) => void,
  lastOpen = false,
): DrawnHistory {
  const nodes: HTMLElement[] = [];
  const calls = new Map<string, Block>();
  let view: AnswerView | null = null;
  let at = 0;
  const close = () => {
    if (view) after(view, at);
  };
  for (const m of messages) {
    const words = m.role === "user" ? saidBy(m) : [];
    if (words.length) {
      close();
      view = null;
      nodes.push(
        h(
          "article",
          { class: "msg user", "aria-label": "You" },
          words.map((t) => h("p", null, t)),
        ),
      );
      continue;
    }
    if (!view) {
      view = new AnswerView();
      nodes.push(view.el);
    }
    drawInto(view, m, reasons, calls);
    at = m.created_at;
  }
  // A turn still waiting on a tool is not finished: its "What it was shown" comes when it ends.
  if (!lastOpen) close();
  return { nodes, last: view, calls };
}
