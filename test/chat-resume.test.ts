/**
 * Dropped streams: every event of a turn has an id; a client cut off reconnects (GET /v1/sessions/{id}/stream with
 * Last-Event-ID) and gets the rest, live or finished, with nothing lost, repeated or run twice. Quiet streams get
 * keep-alive comments. A reply's text blocks reach a client that joins them with a blank line between.
 */
import { createParser } from "eventsource-parser";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ChatEvent } from "../src/core/events";
import { relay } from "../src/sessions/relay";
import { api, chat, createUser, history, newSession, saidIn, script, seen, textReply, toolCall } from "./helpers";

type Framed = { id: string; event: ChatEvent };

function framesOf(text: string): Framed[] {
  const out: Framed[] = [];
  createParser({ onEvent: (e) => out.push({ id: e.id ?? "", event: { type: e.event, ...JSON.parse(e.data) } as ChatEvent }) }).feed(text);
  return out;
}

/** Starts a streamed turn and reads it until `until` has arrived, then drops the connection. */
async function cutAfter(key: string, body: Record<string, unknown>, until: string) {
  const res = await api(key, "POST", "/v1/chat", body);
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes(until) || !text.endsWith("\n\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the turn ended early: ${text}`);
    text += value;
  }
  await reader.cancel();
  const frames = framesOf(text);
  const session = frames.find((f) => f.event.type === "session")?.event;
  return { frames, sessionId: session?.type === "session" ? session.id : "", lastId: frames.at(-1)?.id ?? "" };
}

const reconnect = (key: string, sessionId: string, lastId?: string) =>
  api(key, "GET", `/v1/sessions/${sessionId}/stream`, undefined, lastId ? { "last-event-id": lastId } : {});

const chunked = (text: string) => ({ reply: { content: [{ type: "text" as const, text }], no_thinking: true }, chunk: 3 });

describe("resuming engram's stream", () => {
  it("a client cut mid-turn gets the rest after its Last-Event-ID: every event once, in order, and nothing runs twice", async () => {
    const u = await createUser();
    await script(u.id, { ...toolCall("current_time", {}, "toolu_c1", "Let me check the clock."), chunk: 3 }, chunked("It is late in the evening now."));
    const cut = await cutAfter(u.key, { message: "what time is it?" }, "event: text");
    const rest = await reconnect(u.key, cut.sessionId, cut.lastId);
    expect(rest.status).toBe(200);
    expect(rest.headers.get("content-type")).toContain("text/event-stream");
    const after = framesOf(await rest.text());
    const all = [...cut.frames, ...after];
    // Ids run 1, 2, 3, ... within the segment: nothing lost, nothing repeated.
    const [turn] = cut.lastId.split(":");
    expect(all.map((f) => f.id)).toEqual(all.map((_, i) => `${turn}:${i + 1}`));
    expect(all.map((f) => f.event.type).filter((t) => t !== "text" && t !== "thinking")).toEqual(["session", "tool_use", "tool_result", "done"]);
    // The whole segment, asked for again, is the same events.
    const whole = framesOf(await (await reconnect(u.key, cut.sessionId)).text());
    expect(whole).toEqual(all);
    // The model was asked twice (before and after the tool), as in a turn nobody cut.
    expect(await seen(u.id)).toHaveLength(2);
    const replied = (await history(u.key, cut.sessionId)).messages.at(-1);
    expect(saidIn(replied ?? { content: [] })).toBe("It is late in the evening now.");
  });

  it("reconnecting while the turn still runs follows it live to its end", async () => {
    const u = await createUser();
    await script(u.id, toolCall("filibuster", {}, "toolu_f1", "Let me keep talking."));
    const cut = await cutAfter(u.key, { message: "keep going" }, "event: tool_use");
    const res = await reconnect(u.key, cut.sessionId, cut.lastId);
    expect(res.status).toBe(200);
    // The turn outlived its first reader: it is still running, and the reconnected reader sees how it ends.
    expect(await (await api(u.key, "POST", `/v1/sessions/${cut.sessionId}/stop`)).json()).toEqual({ ok: true, stopped: 1 });
    const after = framesOf(await res.text());
    expect(after.map((f) => f.event.type)).toEqual(["tool_result", "done"]);
    expect(after.at(-1)?.event).toMatchObject({ type: "done", stop_reason: "stopped" });
    expect(after[0]?.id).toBe(`${cut.lastId.split(":")[0]}:${Number(cut.lastId.split(":")[1]) + 1}`);
  });

  it("answers 204 when no stream is held, 409 for a stream it no longer holds, 400 for a malformed id, 404 for another user's session", async () => {
    const u = await createUser();
    expect((await reconnect(u.key, await newSession(u.id))).status).toBe(204);
    await script(u.id, textReply("one"), textReply("two"));
    const first = await cutAfter(u.key, { message: "hi" }, "event: done");
    await chat(u.key, { message: "again", session_id: first.sessionId });
    // A later turn replaced the first one's events.
    const gone = await reconnect(u.key, first.sessionId, first.lastId);
    expect(gone.status).toBe(409);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe("conflict");
    const bad = await reconnect(u.key, first.sessionId, "not an id");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    const mallory = await createUser();
    expect((await reconnect(mallory.key, first.sessionId)).status).toBe(404);
    expect((await api(null, "GET", `/v1/sessions/${first.sessionId}/stream`)).status).toBe(401);
  });
});

describe("text blocks of one reply", () => {
  it("are joined with a blank line where a tool call separates them, in the stream and in the JSON reply", async () => {
    const u = await createUser();
    await script(u.id, toolCall("current_time", {}, "toolu_t1", "Let me check the clock."), textReply("current_time says it is noon."));
    const streamed = await chat(u.key, { message: "time?" });
    expect(streamed.text).toBe("Let me check the clock.\n\ncurrent_time says it is noon.");
    await script(u.id, toolCall("current_time", {}, "toolu_t2", "Checking."), textReply("Noon."));
    const res = await api(u.key, "POST", "/v1/chat", { message: "time?", stream: false });
    expect(((await res.json()) as { reply: string }).reply).toBe("Checking.\n\nNoon.");
  });
});

describe("keep-alive comments", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("go out when the stream is quiet, never inside a frame, and stop with the stream", async () => {
    vi.useFakeTimers();
    const enc = new TextEncoder();
    let push: (s: string) => void = () => undefined;
    let close: () => void = () => undefined;
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (s) => controller.enqueue(enc.encode(s));
        close = () => controller.close();
      },
    });
    const reader = relay(source, 1_000).pipeThrough(new TextDecoderStream()).getReader();
    const next = async () => {
      const read = reader.read();
      await vi.advanceTimersByTimeAsync(1_000);
      return read;
    };
    expect((await next()).value).toBe(": keep-alive\n\n");
    push("event: text\ndata: ");
    expect((await reader.read()).value).toBe("event: text\ndata: ");
    // Half a frame is out: a comment now would break it.
    await vi.advanceTimersByTimeAsync(3_000);
    push('{"delta":"hi"}\n\n');
    expect((await reader.read()).value).toBe('{"delta":"hi"}\n\n');
    expect((await next()).value).toBe(": keep-alive\n\n");
    close();
    expect((await reader.read()).done).toBe(true);
  });
});
