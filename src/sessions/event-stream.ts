import { type ChatEvent, ndjson } from "../core/events";

export type EventSink = {
  emit(event: ChatEvent): void;
  /** Aborted when the client goes away (the stream is cancelled) or the turn is cancelled. */
  signal: AbortSignal;
};

/**
 * The NDJSON byte stream a turn writes its events to. Writing never throws: once the reader is gone,
 * events are dropped and the signal aborts, so the turn stops at its next await.
 */
export function eventStream(): EventSink & { readable: ReadableStream<Uint8Array>; abort(): void; close(): void } {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const controller = new AbortController();
  let open = true;
  writer.closed.catch(() => controller.abort());
  return {
    readable,
    signal: controller.signal,
    emit(event) {
      if (!open) return;
      writer.write(ndjson(event)).catch(() => {
        open = false;
        controller.abort();
      });
    },
    abort: () => controller.abort(),
    close() {
      open = false;
      writer.close().catch(() => undefined);
    },
  };
}
