import { type ChatEvent, ndjson, sseFrame } from "../core/events";
import { coalescingStream } from "./coalesce";

export type EventSink = {
  emit(event: ChatEvent): void;
  /** Aborted when the client goes away (the stream is cancelled) or the turn is cancelled. */
  signal: AbortSignal;
  /** Resolves once every event emitted so far has been taken by the reader (or the reader is gone). */
  drained?(): Promise<void>;
};

const encoder = new TextEncoder();

/**
 * Why a turn was aborted when the user stopped it (POST /v1/sessions/{id}/stop), as opposed to a client that
 * went away: the reader is still there, so the stream must still end with `done`.
 */
export const STOPPED = new DOMException("the user stopped the turn", "AbortError");
export const stoppedByUser = (signal: AbortSignal) => signal.aborted && signal.reason === STOPPED;

/**
 * How a turn's events travel to the Worker: as the SSE frames the client receives (the Worker passes
 * the bytes on without parsing them), or as NDJSON for a Worker that collects them into one JSON body.
 */
export type EventFormat = "sse" | "ndjson";

/**
 * The byte stream a turn writes its events to. Writing never throws: once the reader is gone, events
 * are dropped and the signal aborts, so the turn stops at its next await. Events the reader has not
 * taken yet leave together as one chunk (see coalesce.ts).
 */
export function eventStream(format: EventFormat): EventSink & { readable: ReadableStream<Uint8Array>; abort(reason?: unknown): void; close(): void } {
  const controller = new AbortController();
  const out = coalescingStream(() => controller.abort());
  return {
    readable: out.readable,
    signal: controller.signal,
    emit(event) {
      out.push(format === "sse" ? encoder.encode(sseFrame(event)) : ndjson(event));
    },
    drained: out.drained,
    abort: (reason) => controller.abort(reason),
    close: out.close,
  };
}
