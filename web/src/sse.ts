/**
 * A reader of Server-Sent Events text, as the HTML standard interprets an event stream
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation): lines end in CRLF,
 * LF or CR; `data:` lines join with a newline; `event:` names the event (else "message"); `id:` sets the last event
 * id, which every later event carries; a line starting with ":" is a comment; a blank line dispatches; an event
 * with no data is dropped. The text may arrive split anywhere, a CRLF included. A leading byte-order mark is the
 * decoder's to strip (TextDecoderStream does).
 */
export type SseEvent = { event: string; data: string; id: string };

/** A parser of one stream: give it each piece of text as it arrives, get back the events it completes. */
export function sseParser(): (text: string) => SseEvent[] {
  let pending = "";
  let afterCr = false;
  let event = "";
  let data = "";
  let id = "";
  return (text) => {
    const events: SseEvent[] = [];
    // The previous piece ended in CR: a LF opening this one ends that same line.
    if (text) {
      if (afterCr && text[0] === "\n") text = text.slice(1);
      afterCr = text.endsWith("\r");
    }
    // Without a line end nothing completes: keep the piece (joined once, when its line ends).
    if (!/[\r\n]/.test(text)) {
      pending += text;
      return events;
    }
    const lines = (pending + text).split(/\r\n|\r|\n/);
    pending = lines.pop() as string;
    for (const line of lines) {
      if (!line) {
        if (data) events.push({ event: event || "message", data: data.slice(0, -1), id });
        event = data = "";
        continue;
      }
      // A comment's field name is "": it matches nothing below.
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(line[colon + 1] === " " ? colon + 2 : colon + 1);
      if (field === "data") data += `${value}\n`;
      else if (field === "event") event = value;
      else if (field === "id" && !value.includes("\0")) id = value;
      // `retry` sets EventSource's reconnection delay: this reader does not reconnect, so it has no use for it.
    }
    return events;
  };
}
