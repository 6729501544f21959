import type { MessageParam } from "../chat/loop";
import { TURN_CONTEXT_TAG } from "../chat/prompt";
import { citesEvidence, type EvidenceBlock } from "../core/evidence";

export type StoredMessage = { seq: number; role: "user" | "assistant"; content: MessageParam["content"]; created_at: number };

type Block = Exclude<MessageParam["content"], string>[number];

const asBlocks = (content: MessageParam["content"]): Block[] =>
  typeof content === "string" ? [{ type: "text" as const, text: content }] : (content as Block[]);

const isThinking = (b: Block) => b.type === "thinking" || b.type === "redacted_thinking";

/**
 * A user message that opens a turn: it answers no tool call. One that carries a tool_result belongs to the
 * turn of the call it answers, so a fold or a rollback never cuts between a tool_use and its result.
 */
export const opensTurn = (m: Pick<StoredMessage, "role" | "content">) => m.role === "user" && !asBlocks(m.content).some((b) => b.type === "tool_result");

/** The per-turn context block that heads a turn's user message (never the user's own text: that is the last block). */
const isTurnContext = (b: Block, i: number, all: Block[]) => i === 0 && all.length > 1 && b.type === "text" && b.text.startsWith(TURN_CONTEXT_TAG);

/** The index of the row that opens the latest turn (0 when none does). */
export function currentTurnStart(rows: readonly Pick<StoredMessage, "role" | "content">[]): number {
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i];
    if (row && opensTurn(row)) return i;
  }
  return 0;
}

export type ModelHistory = {
  messages: MessageParam[];
  /** Indexes in `messages` of the last message of each earlier turn (where cache breakpoints go). */
  turnEnds: number[];
};

/**
 * Stored history -> Messages API messages (docs/models.md, preserved thinking and caching).
 * - The current turn (from its opening user message on) is sent exactly as stored: its thinking blocks
 *   are verified against everything before them, so nothing in it is dropped, edited or reordered.
 * - Earlier turns are sent the same way on every request, so their prefix stays cached: without their
 *   per-turn context block (it was for that turn only) and without thinking blocks, which are dropped
 *   all together, never one by one (the per-turn context and the system prompt change between turns,
 *   which would invalidate them); and without their replies' citations of evidence, whose documents were
 *   that turn's only (`withEvidence`) and may since have been forgotten.
 * - Consecutive messages of one role are merged (a turn that stopped after tool results, or a cancelled
 *   or expired call, followed by a new user message; the halves of a paused server-tool turn), with
 *   tool_result blocks kept first as the API requires. Blocks keep their order otherwise.
 */
export function toModelMessages(rows: readonly StoredMessage[]): MessageParam[] {
  return modelHistory(rows).messages;
}

export function modelHistory(rows: readonly StoredMessage[]): ModelHistory {
  const start = currentTurnStart(rows);
  const out: { role: "user" | "assistant"; blocks: Block[]; turnEnd: boolean }[] = [];
  rows.forEach((row, i) => {
    let blocks = asBlocks(row.content);
    if (i < start)
      blocks = row.role === "assistant" ? blocks.filter((b) => !isThinking(b)).map(withoutEvidence) : blocks.filter((b, j, all) => !isTurnContext(b, j, all));
    if (!blocks.length) return;
    const prev = out.at(-1);
    if (prev && prev.role === row.role) {
      const merged = [...prev.blocks, ...blocks];
      if (row.role === "user") merged.sort((a, b) => Number(b.type === "tool_result") - Number(a.type === "tool_result"));
      prev.blocks = merged;
      prev.turnEnd = false;
    } else {
      out.push({ role: row.role, blocks, turnEnd: false });
    }
    const next = rows[i + 1];
    const last = out.at(-1);
    if (last && i < start && next && opensTurn(next)) last.turnEnd = true;
  });
  return {
    messages: out.map((m) => ({ role: m.role, content: m.blocks }) as MessageParam),
    turnEnds: out.flatMap((m, i) => (m.turnEnd && out[i + 1]?.role !== m.role ? [i] : [])),
  };
}

/** A text block without its citations of evidence (other citations, of web search results, stay). */
function withoutEvidence(b: Block): Block {
  if (b.type !== "text" || !b.citations?.length) return b;
  const kept = b.citations.filter((c) => !citesEvidence(c));
  if (kept.length === b.citations.length) return b;
  const { citations: _dropped, ...rest } = b;
  return kept.length ? { ...rest, citations: kept } : rest;
}

/**
 * The rows with the current turn's evidence (core/evidence.ts) in its opening user message, before the user's
 * words. Evidence is never stored in history: each turn's request carries its own, kept with the turn's state
 * (across a suspension too) so that the turn is replayed exactly; earlier turns go without theirs.
 */
export function withEvidence(rows: readonly StoredMessage[], evidence: readonly EvidenceBlock[]): StoredMessage[] {
  const start = currentTurnStart(rows);
  const opening = rows[start];
  if (!evidence.length || !opening || !opensTurn(opening)) return [...rows];
  const blocks = asBlocks(opening.content);
  const content = [...blocks.slice(0, -1), ...evidence, ...blocks.slice(-1)];
  return rows.map((r, i) => (i === start ? { ...r, content } : r));
}

/** Short follow-ups ("and the other one?") say little on their own: seed retrieval with the last reply too. */
export function followUpQuery(message: string, lastReply: StoredMessage | undefined): string {
  if (message.length >= 50 || !lastReply) return message;
  const text = asBlocks(lastReply.content)
    .flatMap((b) => (b.type === "text" ? [b.text] : []))
    .join(" ");
  return `${message}\n${text.slice(0, 500)}`;
}
