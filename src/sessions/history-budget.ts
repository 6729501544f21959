/**
 * The history budget: which stored messages a model call sees. Messages already folded into the
 * session summary are left out (they stay in storage); when the rest grows past the budget, the oldest
 * whole turns are folded next, down to half the budget, so summarising happens once every few turns
 * rather than on every turn. Folding is done after a turn, ahead of the next one (`aheadTrigger`), so a
 * turn's first byte does not wait for a summary call; a turn folds before its model call only when its
 * own message takes the history past the budget. When no summary can be made (the background model fails,
 * and retries back off), the request is bounded anyway: the oldest whole turns are left out of it, with a
 * note saying so (`trimFrom`). A cut is only ever made where a user turn starts (a user message without tool
 * results), so a tool_use is never separated from its tool_result.
 */
import type { MessageParam } from "../chat/loop";
import { approxTokens } from "../lib/text";
import { opensTurn, type StoredMessage } from "./history";

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

/** The messages a model call sees after the summary. */
export const liveRows = (rows: readonly StoredMessage[], summary: SessionSummary | null) => (summary ? rows.filter((r) => r.seq > summary.through) : [...rows]);

/**
 * Splits live history into what to fold into the summary now and what to keep. Nothing is folded
 * while it is within `trigger` tokens (the budget, unless folding ahead); the latest turn (the last
 * turn start and what follows it) is always kept.
 */
export function planFold(live: readonly StoredMessage[], budgetTokens: number, trigger = budgetTokens): { fold: StoredMessage[]; keep: StoredMessage[] } {
  const sizes = live.map(messageTokens);
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= trigger) return { fold: [], keep: [...live] };
  const target = Math.floor(budgetTokens / 2);
  let suffix = total;
  let cut = -1;
  for (let i = 0; i < live.length; i++) {
    const row = live[i];
    if (row && i > 0 && opensTurn(row)) {
      cut = i;
      if (suffix <= target) break;
    }
    suffix -= sizes[i] ?? 0;
  }
  if (cut <= 0) return { fold: [], keep: [...live] };
  return { fold: live.slice(0, cut), keep: live.slice(cut) };
}

/**
 * After a turn: the size past which to fold now rather than before the next turn's model call. A next
 * turn as large as the one that just ended would take the history past the budget, so fold now (never
 * at less than half the budget, the size a fold leaves).
 */
export function aheadTrigger(live: readonly StoredMessage[], budgetTokens: number): number {
  const start = live.findLastIndex(opensTurn);
  const latest = live.slice(Math.max(start, 0)).reduce((n, r) => n + messageTokens(r), 0);
  return Math.max(Math.floor(budgetTokens / 2), budgetTokens - latest);
}

/** Consecutive failed folds, and the seq of the user message that started the turn the last one was made for. */
export type FoldFailures = { count: number; at_seq: number };

const RETRY_WAIT_MAX_TURNS = 32;

/** The seq of the user message that started the latest turn (0 when there is none). */
export const latestTurnSeq = (rows: readonly StoredMessage[]) => rows.findLast(opensTurn)?.seq ?? 0;

/**
 * Whether to try folding now, `before` a turn's model call or `after` a turn. Without earlier failures,
 * always. After failures, only after a turn, off the first byte, and each failure doubles the turns the next
 * try waits (1, 2, 4 ... up to 32 turns, a turn being counted as two messages): a background model that keeps
 * failing costs neither every turn's first byte nor a call after every turn. Meanwhile `trimFrom` keeps the
 * request within the budget.
 */
export function foldDue(failures: FoldFailures | null, turnSeq: number, when: "before" | "after"): boolean {
  if (!failures) return true;
  if (when === "before") return false;
  const wait = Math.min(2 ** (failures.count - 1), RETRY_WAIT_MAX_TURNS);
  return turnSeq - failures.at_seq > 2 * wait;
}

const tokensOf = (rows: readonly StoredMessage[]) => rows.reduce((n, r) => n + messageTokens(r), 0);

/**
 * Where a request starts when the live history is past the budget and no summary covers enough of it: the seq of
 * the turn the request's messages begin with (null: send all of them). A cut already made (`from`) stays while what
 * follows it fits, so the request's prefix, and the prompt cache built on it, stays put from turn to turn; a new cut
 * keeps the newest whole turns within half the budget (the turn in progress always), as a fold would.
 */
export function trimFrom(live: readonly StoredMessage[], budgetTokens: number, from: number | null): number | null {
  if (tokensOf(live) <= budgetTokens) return null;
  if (from !== null && tokensOf(live.filter((r) => r.seq >= from)) <= budgetTokens) return from;
  const first = planFold(live, budgetTokens).keep[0];
  return first && first !== live[0] ? first.seq : null;
}

export const SUMMARY_OPEN = "<conversation_summary>";
export const SUMMARY_CLOSE = "</conversation_summary>";

/** What stands in for the messages `trimFrom` left out, at the start of the first user message. */
export function trimmedRow(dropped: number, at: number): StoredMessage {
  const text = `[${dropped} earlier messages of this conversation are left out here: they could not be summarised yet. Ask the user if you need what they said.]`;
  return { seq: 0, role: "user", content: [{ type: "text", text }] as MessageParam["content"], created_at: at };
}

/** The summary as the start of the first user message, so the request still begins with a user turn. */
export function summaryRow(summary: SessionSummary): StoredMessage {
  const text = `${SUMMARY_OPEN}\nEarlier in this conversation (summarised; the full turns are no longer shown):\n${summary.text}\n${SUMMARY_CLOSE}`;
  return { seq: 0, role: "user", content: [{ type: "text", text }] as MessageParam["content"], created_at: summary.updated_at };
}
