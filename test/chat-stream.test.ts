// The byte stream between a turn and its client: what waits for a slow reader leaves in one chunk, the
// reader's departure reaches the turn, and the turn can tell when its last event has been taken.
import { describe, expect, it } from "vitest";
import { coalescingStream } from "../src/sessions/coalesce";
import { eventStream } from "../src/sessions/event-stream";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);

describe("chat stream", () => {
  it("events written while the reader was away arrive together, in order, then the stream ends", async () => {
    const out = coalescingStream(() => undefined);
    out.push(bytes("a"));
    out.push(bytes("b"));
    out.push(bytes("c"));
    out.close();
    const reader = out.readable.getReader();
    expect(text((await reader.read()).value)).toBe("abc");
    expect((await reader.read()).done).toBe(true);
  });

  it("a reader that is waiting gets each write as it comes", async () => {
    const out = coalescingStream(() => undefined);
    const reader = out.readable.getReader();
    const first = reader.read();
    out.push(bytes("one"));
    expect(text((await first).value)).toBe("one");
    const second = reader.read();
    out.push(bytes("two"));
    expect(text((await second).value)).toBe("two");
  });

  it("drained resolves only once the reader has taken what was written", async () => {
    const out = coalescingStream(() => undefined);
    out.push(bytes("done"));
    let drained = false;
    const waiting = out.drained().then(() => {
      drained = true;
    });
    await Promise.resolve();
    expect(drained).toBe(false);
    await out.readable.getReader().read();
    await waiting;
    expect(drained).toBe(true);
  });

  it("a reader that leaves stops the turn: the signal aborts, later events are dropped, drained resolves", async () => {
    const sink = eventStream("sse");
    sink.emit({ type: "text", delta: "hi" });
    await sink.readable.cancel();
    expect(sink.signal.aborted).toBe(true);
    sink.emit({ type: "text", delta: "unseen" });
    await expect(sink.drained?.()).resolves.toBeUndefined();
  });

  it("an error after some events: the reader gets those events, then the error", async () => {
    const out = coalescingStream(() => undefined);
    out.push(bytes("partial"));
    out.error(new Error("upstream broke"));
    const reader = out.readable.getReader();
    expect(text((await reader.read()).value)).toBe("partial");
    await expect(reader.read()).rejects.toThrow("upstream broke");
  });

  it("SSE frames for a streaming client, NDJSON for one that collects the turn", async () => {
    const sse = eventStream("sse");
    sse.emit({ type: "session", id: "ses_1" });
    sse.close();
    expect(await new Response(sse.readable).text()).toBe('event: session\ndata: {"id":"ses_1"}\n\n');
    const nd = eventStream("ndjson");
    nd.emit({ type: "session", id: "ses_1" });
    nd.close();
    expect(await new Response(nd.readable).text()).toBe('{"type":"session","id":"ses_1"}\n');
  });
});
