/**
 * A user message that opened a turn is always answered in history. When a turn ends with no reply stored (the
 * output limit cut it before it said anything, or the model said nothing), or the Worker was killed before the turn
 * ended, one of these notices stands in as the assistant's answer. Without it the next turn would send the old
 * message merged with the new one, as if the user had just asked both, and the model could act on the old request
 * (docs/reliability.md, "Turns").
 */
import type { ChatEvent } from "../core/events";

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
