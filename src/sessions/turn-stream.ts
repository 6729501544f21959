/** How a turn segment's stream ends: its last event, and the hand-over of it to the reader. */
import type { Usage } from "../core/events";
import { AppError, describeFailure } from "../lib/errors";
import { waitAtMost } from "../lib/wait";
import { isAbort, modelFailure } from "../model/errors";
import { type EventSink, stoppedByUser } from "./event-stream";

/** The sink, noting the name of every tool call it announces (a stopped turn's `done` lists them). */
export function notingTools(sink: EventSink, used: string[]): EventSink {
  return {
    ...sink,
    emit(event) {
      if (event.type === "tool_use") used.push(event.name);
      sink.emit(event);
    },
  };
}

/**
 * Ends a segment that threw. An abort sends nothing (the client is gone), unless the user stopped the turn:
 * then the client is still reading and the stream ends with `done`, stop_reason "stopped", with what the
 * turn had spent and called so far. `then`: what the client can do now, added to the error's message.
 */
export function endWithFailure(err: unknown, sink: EventSink, sessionId: string, soFar: { usage: Usage; toolsUsed: string[] }, then?: string): void {
  if (isAbort(err) || sink.signal.aborted) {
    if (stoppedByUser(sink.signal)) sink.emit({ type: "done", stop_reason: "stopped", usage: soFar.usage, tools_used: soFar.toolsUsed });
    return;
  }
  // A model failure, or the budget refusing the next call (reserve.ts).
  const failure = modelFailure(err) ?? (err instanceof AppError ? { code: err.code, message: err.message } : null);
  if (!failure) console.error(JSON.stringify({ session: sessionId, error: describeFailure(err) }));
  const { code, message } = failure ?? { code: "internal", message: "internal error" };
  sink.emit({ type: "error", code, message: then ? `${message}; ${then}` : message });
}

/** How long a turn's bookkeeping waits for the reader to take its last event (it is never held longer). */
const HANDOVER_MS = 2_000;

/**
 * Waits until the reader has taken every event emitted so far, so `done` (or `tool_pending`, or `error`)
 * leaves before the bookkeeping batch rather than behind it; the stream itself still ends after the
 * bookkeeping, so a read made once it has ended sees the turn's usage. Bounded: a reader that stops
 * reading never holds the session's lock.
 */
export async function handedOver(sink: EventSink): Promise<void> {
  if (sink.drained) await waitAtMost(sink.drained(), HANDOVER_MS);
}
