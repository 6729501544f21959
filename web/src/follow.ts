/**
 * Keeps the conversation in view: new content scrolls the page to the newest line while the reader is at the
 * bottom; once they scroll up to read, it stays put and a "New messages" button (announced politely) offers the
 * way back down. The page itself scrolls (the message box is sticky at its foot), so "the bottom" is the page's.
 */
import { button, h } from "./dom";

/** How close to the foot of the page still counts as "at the bottom" (a line or two of slack). */
const SLACK = 48;

const atBottom = () => {
  const doc = document.documentElement;
  return doc.scrollHeight - (window.scrollY + window.innerHeight) <= SLACK;
};

export function follower(log: HTMLElement) {
  let pinned = true;
  const jump = button("New messages ↓", () => toBottom(), { class: "new-messages", hidden: true });
  const region = h("div", { class: "new-messages-bar", "aria-live": "polite" }, jump);

  function toBottom(): void {
    pinned = true;
    jump.hidden = true;
    window.scrollTo({ top: document.documentElement.scrollHeight });
  }

  window.addEventListener(
    "scroll",
    () => {
      // The chat is kept while other screens show: their scrolling is not the reader leaving the conversation.
      if (!log.isConnected) return;
      pinned = atBottom();
      if (pinned) jump.hidden = true;
    },
    { passive: true },
  );

  return {
    /** The "New messages" control, to place just above the message box. */
    el: region,
    /** After content was added: follow it, or say there is more below. */
    added(): void {
      if (!log.isConnected) return;
      if (pinned) toBottom();
      else jump.hidden = false;
    },
    /** The reader sent something or opened a conversation: they are at the newest content again. */
    toBottom,
  };
}
