// The byte stream between a turn and its client: what waits for a slow reader leaves in one chunk, a reader that
// leaves does not stop the turn, and the turn can tell when its last event has been taken.
import { describe, expect, it } from "vitest";
import { coalescingStream } from "../src/sessions/coalesce";
import { renderer, turnSink } from "../src/sessions/event-stream";
import { TurnLog } from "../src/sessions/turn-log";

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

  it("a reader that leaves does not stop the turn: the signal stays, later events are kept for the next reader, drained resolves", async () => {
    const log = new TurnLog("t1");
    const sink = turnSink(log);
    const first = log.attach(0, renderer("sse", "t1"));
    sink.emit({ type: "text", delta: "hi" });
    await first?.cancel();
    expect(sink.signal.aborted).toBe(false);
    sink.emit({ type: "text", delta: "seen later" });
    await expect(sink.drained?.()).resolves.toBeUndefined();
    log.end();
    const again = await new Response(log.attach(1, renderer("sse", "t1"))).text();
    expect(again).toBe('id: t1:2\nevent: text\ndata: {"delta":"seen later"}\n\n');
  });

  it("an error after some events: the reader gets those events, then the error", async () => {
    const out = coalescingStream(() => undefined);
    out.push(bytes("partial"));
    out.error(new Error("upstream broke"));
    const reader = out.readable.getReader();
    expect(text((await reader.read()).value)).toBe("partial");
    await expect(reader.read()).rejects.toThrow("upstream broke");
  });

  it("SSE frames with ids for a streaming client, NDJSON for one that collects the turn", async () => {
    const sse = new TurnLog("t1");
    const sseOut = sse.attach(0, renderer("sse", "t1"));
    sse.append({ type: "session", id: "ses_1" });
    sse.end();
    expect(await new Response(sseOut).text()).toBe('id: t1:1\nevent: session\ndata: {"id":"ses_1"}\n\n');
    const nd = new TurnLog("t2");
    const ndOut = nd.attach(0, renderer("ndjson", "t2"));
    nd.append({ type: "session", id: "ses_1" });
    nd.end();
    expect(await new Response(ndOut).text()).toBe('{"type":"session","id":"ses_1"}\n');
  });
});
