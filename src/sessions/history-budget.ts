/**
 * The history budget: which stored messages a model call sees. Messages already folded into the
 * session summary are left out (they stay in storage); when the rest grows past the budget, the oldest
 * whole turns are folded next, down to half the budget, so summarising happens once every few turns
 * rather than on every turn. A cut is only ever made where a user turn starts (a user message without
 * tool results), so a tool_use is never separated from its tool_result.
 */
import type { MessageParam } from "../chat/loop";
import { approxTokens } from "../lib/text";
import type { StoredMessage } from "./history";

export type SessionSummary = {
  text: string;
  /** Messages with seq <= through are folded into `text`. */
  through: number;
  /** How many messages were folded, in all. */
  messages: number;
  updated_at: number;
};

// Stored messages are parsed once and kept (storage.ts), so their sizes are counted once too.
const counted = new WeakMap<object, number>();

export function messageTokens(m: Pick<StoredMessage, "content">): number {
  if (typeof m.content === "string") return approxTokens(JSON.stringify(m.content));
  let n = counted.get(m.content);
  if (n === undefined) counted.set(m.content, (n = approxTokens(JSON.stringify(m.content))));
  return n;
}

const isTurnStart = (m: StoredMessage) => m.role === "user" && (typeof m.content === "string" || !m.content.some((b) => b.type === "tool_result"));

/** The messages a model call sees after the summary. */
export const liveRows = (rows: readonly StoredMessage[], summary: SessionSummary | null) => (summary ? rows.filter((r) => r.seq > summary.through) : [...rows]);

/**
 * Splits live history into what to fold into the summary now and what to keep. Nothing is folded
 * while it fits the budget; the turn in progress (the last turn start) is always kept.
 */
export function planFold(live: readonly StoredMessage[], budgetTokens: number): { fold: StoredMessage[]; keep: StoredMessage[] } {
  const sizes = live.map(messageTokens);
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= budgetTokens) return { fold: [], keep: [...live] };
  const target = Math.floor(budgetTokens / 2);
  let suffix = total;
  let cut = -1;
  for (let i = 0; i < live.length; i++) {
    const row = live[i];
    if (row && i > 0 && isTurnStart(row)) {
      cut = i;
      if (suffix <= target) break;
    }
    suffix -= sizes[i] ?? 0;
  }
  if (cut <= 0) return { fold: [], keep: [...live] };
  return { fold: live.slice(0, cut), keep: live.slice(cut) };
}

/** Consecutive failed folds, and the seq of the user message of the turn where the last one failed. */
export type FoldFailures = { count: number; at_seq: number };

const RETRY_WAIT_MAX_TURNS = 32;

/**
 * Whether a turn should try to fold after earlier folds failed. Each failure doubles the turns the next try
 * waits (1, 2, 4 ... up to 32 turns, a turn being counted as two messages), so a background model that keeps
 * failing does not cost every turn of a long session an extra model call before its first byte. Once the
 * history the call would send is twice the budget, every turn tries: the request is growing towards the
 * context window.
 */
export function foldDue(failures: FoldFailures | null, turnSeq: number, liveTokens: number, budgetTokens: number): boolean {
  if (!failures || liveTokens > 2 * budgetTokens) return true;
  const wait = Math.min(2 ** (failures.count - 1), RETRY_WAIT_MAX_TURNS);
  return turnSeq - failures.at_seq > 2 * wait;
}

export const SUMMARY_OPEN = "<conversation_summary>";
export const SUMMARY_CLOSE = "</conversation_summary>";

/** The summary as the start of the first user message, so the request still begins with a user turn. */
export function summaryRow(summary: SessionSummary): StoredMessage {
  const text = `${SUMMARY_OPEN}\nEarlier in this conversation (summarised; the full turns are no longer shown):\n${summary.text}\n${SUMMARY_CLOSE}`;
  return { seq: 0, role: "user", content: [{ type: "text", text }] as MessageParam["content"], created_at: summary.updated_at };
}
