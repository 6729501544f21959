/**
 * A user message that opened a turn is always answered in history. When a turn ends with no reply stored (the
 * output limit cut it before it said anything, or the model said nothing), or the Worker was killed before the turn
 * ended, one of these notices stands in as the assistant's answer. Without it the next turn would send the old
 * message merged with the new one, as if the user had just asked both, and the model could act on the old request
 * (docs/reliability.md, "Turns").
 */
import { cutShort } from "../chat/loop";
import type { ChatEvent } from "../core/events";
import type { EventSink } from "./event-stream";
import { opensTurn, type StoredMessage } from "./history";
import type { SessionStorage } from "./storage";

const said = (text: string) => ({ role: "assistant" as const, content: [{ type: "text" as const, text }] });

export const NO_REPLY = {
  truncated: said("[No reply: the output limit cut this reply off before it said anything; a tool call it was making was dropped, so nothing was done.]"),
  empty: said("[No reply: the model ended this turn without an answer.]"),
  interrupted: said(
    "[Interrupted: this turn stopped before it finished (the server was restarted), and its request was not acted on any further. The user can ask again.]",
  ),
};

/** What the client is told at the start of the turn that found the earlier one interrupted. */
export const INTERRUPTED: ChatEvent = {
  type: "notice",
  code: "interrupted",
  message: "your previous message was interrupted before it was answered, and it was not acted on; send it again if you still want it",
};

/** A turn that ended with nothing stored after its user message answers it with a notice. */
export function answerUnanswered(store: SessionStorage, stopReason: string): void {
  const last = store.lastMessage();
  if (last && opensTurn(last)) store.append([cutShort(stopReason) ? NO_REPLY.truncated : NO_REPLY.empty]);
}

/**
 * Before a new turn: the turn before it never ended, the Worker was killed while it ran (its mark is still set). If
 * it left the user's message (or a tool round) unanswered, a notice answers it, also in `rows` (the live history the
 * new turn goes on from), and the client is told: the model must never take the old message for part of the new
 * one and act on it.
 */
export function closeInterrupted(store: SessionStorage, rows: StoredMessage[], sink: EventSink): void {
  if (!store.turnRunning()) return;
  store.markTurnRunning(false);
  if (store.lastMessage()?.role !== "user") return;
  const [seq] = store.append([NO_REPLY.interrupted]);
  if (seq !== undefined) rows.push({ seq, ...NO_REPLY.interrupted, created_at: Date.now() });
  sink.emit(INTERRUPTED);
}
