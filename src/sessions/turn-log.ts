/**
 * The events of a running turn segment, kept by the session object so a client that lost its connection can
 * attach again and get the rest (or the whole segment, however it ended) without anything running twice.
 * The segment writes each event once; every reader renders the log in its own format from where it starts.
 * A reader that leaves only detaches: the turn runs on (POST /v1/sessions/{id}/stop is how a client stops it).
 */
import type { ChatEvent } from "../core/events";
import { type Coalescing, coalescingStream } from "./coalesce";

/**
 * How many bytes of events (as JSON) one segment's log keeps. Past it the segment still streams to its readers,
 * but a reader can no longer attach from the start of it, nor from a point after the cut-off (docs/api.md).
 */
export const MAX_LOG_BYTES = 4 * 1024 * 1024;

/** Renders one event for one reader; `seq` is the event's position in its segment, from 1. Stateful per reader. */
export type Renderer = (event: ChatEvent, seq: number) => Uint8Array | string | undefined;

type Reader = { out: Coalescing; render: Renderer };

const encoder = new TextEncoder();
const bytesOf = (chunk: Uint8Array | string) => (typeof chunk === "string" ? encoder.encode(chunk) : chunk);

export class TurnLog {
  private readonly events: ChatEvent[] = [];
  /** Events written, held or not. */
  private count = 0;
  private bytes = 0;
  /** Set once the log stopped keeping events (MAX_LOG_BYTES): later events still reach the readers attached. */
  private full = false;
  private readonly readers = new Set<Reader>();
  ended = false;

  /** `id`: the segment's turn id (the request id that started it), the first half of its events' SSE ids. */
  constructor(readonly id: string) {}

  get size(): number {
    return this.count;
  }

  /** The bytes of events held. */
  get held(): number {
    return this.bytes;
  }

  /** Whether every event of the segment is still held, so a reader can replay it from the start. */
  get whole(): boolean {
    return !this.full;
  }

  append(event: ChatEvent): void {
    if (this.ended) return;
    const seq = ++this.count;
    if (!this.full) {
      this.bytes += JSON.stringify(event).length;
      if (this.bytes > MAX_LOG_BYTES) this.full = true;
      else this.events.push(event);
    }
    for (const r of this.readers) {
      const chunk = r.render(event, seq);
      if (chunk !== undefined) r.out.push(bytesOf(chunk));
    }
  }

  /** The segment is over: every reader's stream ends once it has read what is left. */
  end(): void {
    this.ended = true;
    for (const r of this.readers) r.out.close();
    this.readers.clear();
  }

  /**
   * A reader from after the event numbered `after` (0: from the start). Every earlier event goes through `render`
   * too, unsent, so a stateful renderer (the UI protocol's open parts, the paragraph breaks) starts where it was.
   * Null when the log no longer holds the events the reader needs.
   */
  attach(after: number, render: Renderer): ReadableStream<Uint8Array> | null {
    if (this.full || after < 0 || after > this.events.length) return null;
    const reader: Reader = {
      out: coalescingStream(() => {
        this.readers.delete(reader);
      }),
      render,
    };
    this.events.forEach((event, i) => {
      const chunk = render(event, i + 1);
      if (i + 1 > after && chunk !== undefined) reader.out.push(bytesOf(chunk));
    });
    if (this.ended) reader.out.close();
    else this.readers.add(reader);
    return reader.out.readable;
  }

  /** Every event of the log so far, in order (held events only; see `whole`). */
  replay(): readonly ChatEvent[] {
    return this.events;
  }

  /** Resolves once every attached reader has taken what was written (or left). */
  async drained(): Promise<void> {
    await Promise.all([...this.readers].map((r) => r.out.drained()));
  }
}
