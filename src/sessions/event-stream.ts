import { type ChatEvent, ndjson, paragraphBreaks, sseFrame } from "../core/events";
import type { Renderer, TurnLog } from "./turn-log";
import { type UiAnswer, type UiView, uiRenderer } from "./ui-stream";

export type EventSink = {
  emit(event: ChatEvent): void;
  /** Aborted when the turn is stopped or cancelled; a reader that leaves does not abort it (turn-log.ts). */
  signal: AbortSignal;
  /** Resolves once every event emitted so far has been taken by the readers attached (or they are gone). */
  drained?(): Promise<void>;
};

/**
 * Why a turn was aborted when the user stopped it (POST /v1/sessions/{id}/stop), as opposed to a client that
 * went away: the reader is still there, so the stream must still end with `done`.
 */
export const STOPPED = new DOMException("the user stopped the turn", "AbortError");
export const stoppedByUser = (signal: AbortSignal) => signal.aborted && signal.reason === STOPPED;

/**
 * How a reader gets a turn's events: engram's SSE frames (each with its id), NDJSON for a Worker that collects
 * them into one JSON body, or the AI SDK's UI message stream (ui-stream.ts). The Worker passes the bytes on as they are.
 */
export type EventFormat = "sse" | "ndjson" | "ui";

/** An event's SSE id: the segment's turn id and the event's position in it (GET /v1/sessions/{id}/stream resumes after it). */
export const eventId = (turnId: string, seq: number) => `${turnId}:${seq}`;

/** Parses a `Last-Event-ID`; null when it is not one of ours. */
export function parseEventId(id: string): { turnId: string; seq: number } | null {
  const m = /^([\w.-]{1,80}):(\d{1,9})$/.exec(id.trim());
  return m?.[1] && m[2] ? { turnId: m[1], seq: Number(m[2]) } : null;
}

/** A reader's renderer for the segment `turnId`. */
export function renderer(format: EventFormat, turnId: string, view?: UiView, answers?: Record<string, UiAnswer>): Renderer {
  if (format === "ndjson") return (event) => ndjson(event);
  if (format === "ui") return uiRenderer(view ?? { messageId: `msg_${turnId}`, answers: {} }, answers);
  const breaks = paragraphBreaks();
  return (event, seq) => sseFrame(breaks(event), eventId(turnId, seq));
}

/** The sink a segment writes to: its log. Writing never throws; `abort` stops the turn at its next await. */
export function turnSink(log: TurnLog): EventSink & { abort(reason?: unknown): void } {
  const controller = new AbortController();
  return {
    emit: (event) => log.append(event),
    signal: controller.signal,
    drained: () => log.drained(),
    abort: (reason) => controller.abort(reason),
  };
}
