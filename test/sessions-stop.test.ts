import { describe, expect, it } from "vitest";
import type { ChatEvent } from "../src/core/events";
import { chatTurn, lookupOrder } from "./bridge-helpers";
import type { Step } from "./fake-anthropic/worker";
import { api, chat, createUser, history, parseSse, script, seen, textOf, textReply, toolCall } from "./helpers";

// `filibuster` (the test Worker's capability) holds its turn open until the turn is stopped or cancelled.

/** A model reply that stops after its first words and keeps the connection open. */
const stalling = { reply: { content: [{ type: "text" as const, text: "words that never finish" }], no_thinking: true }, chunk: 4, stall_after: 5 };

/**
 * Starts a streamed turn and reads it until `until` has arrived: by default one that calls filibuster, read
 * until the call is under way.
 */
async function holdingTurn(step: Step = toolCall("filibuster", {}, "toolu_s1", "Let me keep talking."), until = "event: tool_use") {
  const u = await createUser();
  await script(u.id, step);
  const res = await api(u.key, "POST", "/v1/chat", { message: "keep going" });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes(until)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the turn ended early: ${text}`);
    text += value;
  }
  const session = parseSse(text).find((e): e is Extract<ChatEvent, { type: "session" }> => e.type === "session");
  const rest = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return parseSse(text);
      text += value;
    }
  };
  return { u, sessionId: session?.id ?? "", rest };
}

describe("POST /v1/sessions/{id}/stop", () => {
  it("stops the running turn: its stream ends, what it wrote stays in history, the next message is answered", { timeout: 60_000 }, async () => {
    const { u, sessionId, rest } = await holdingTurn();
    const stop = await api(u.key, "POST", `/v1/sessions/${sessionId}/stop`);
    expect(stop.status).toBe(200);
    expect(await stop.json()).toEqual({ ok: true, stopped: 1 });

    const events = await rest();
    expect(textOf(events)).toBe("Let me keep talking.");
    expect(events.some((e) => e.type === "error")).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "stopped", tools_used: ["filibuster"] });
    // The model was not asked to go on after the stopped tool call.
    expect(await seen(u.id)).toHaveLength(1);
    const kept = (await history(u.key, sessionId)).messages.map((m) => [m.role, m.content.map((b) => b.type).filter((t) => t !== "thinking")]);
    expect(kept).toEqual([
      ["user", ["text", "text"]],
      ["assistant", ["text", "tool_use"]],
      ["user", ["tool_result"]],
    ]);

    await script(u.id, textReply("Still here."));
    const next = await chat(u.key, { message: "are you there?", session_id: sessionId });
    expect(next.text).toBe("Still here.");
  });

  it("stopped while the model is still writing, the stream still ends with done, and the partial reply is kept", { timeout: 60_000 }, async () => {
    const { u, sessionId, rest } = await holdingTurn(stalling, "event: text");
    expect(await (await api(u.key, "POST", `/v1/sessions/${sessionId}/stop`)).json()).toEqual({ ok: true, stopped: 1 });
    const events = await rest();
    expect(events.filter((e) => e.type === "done" || e.type === "error" || e.type === "tool_pending")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "stopped", tools_used: [] });
    const kept = (await history(u.key, sessionId)).messages;
    expect(kept.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.stringify(kept[1]?.content)).toContain("words");
  });

  it("stopped while a resumed turn's model is writing: done lists the tools of the whole turn", { timeout: 60_000 }, async () => {
    const u = await createUser();
    await script(u.id, toolCall("lookup_order", { id: "A-17" }, "toolu_r1"), stalling);
    const suspended = await chatTurn(u.key, { message: "where is my order?", client_tools: [lookupOrder] });
    expect(suspended.pending?.call_id).toBe("toolu_r1");
    const res = await api(u.key, "POST", `/v1/sessions/${suspended.sessionId}/tool_result`, { call_id: "toolu_r1", content: "shipped" });
    const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("event: text")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the turn ended early: ${text}`);
      text += value;
    }
    expect(await (await api(u.key, "POST", `/v1/sessions/${suspended.sessionId}/stop`)).json()).toEqual({ ok: true, stopped: 1 });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    expect(parseSse(text).at(-1)).toMatchObject({ type: "done", stop_reason: "stopped", tools_used: ["lookup_order"] });
  });

  it("stops a stream:false turn: its JSON body says stop_reason stopped", { timeout: 60_000 }, async () => {
    const u = await createUser();
    await script(u.id, textReply("Hello."), stalling);
    const { sessionId } = await chat(u.key, { message: "hi" });
    const answer = api(u.key, "POST", "/v1/chat", { message: "go on", session_id: sessionId, stream: false });
    // Stop as soon as the turn is running (0 means it has not started yet).
    for (let i = 0; ; i++) {
      const { stopped } = (await (await api(u.key, "POST", `/v1/sessions/${sessionId}/stop`)).json()) as { stopped: number };
      if (stopped === 1) break;
      if (i > 200) throw new Error("the turn never started");
      await new Promise((r) => setTimeout(r, 20));
    }
    const res = await answer;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ session_id: sessionId, stop_reason: "stopped", tools_used: [] });
  });

  it("answers stopped: 0 when nothing is running, and changes nothing", { timeout: 60_000 }, async () => {
    const u = await createUser();
    await script(u.id, textReply("Hello."));
    const first = await chat(u.key, { message: "hi" });
    const before = await history(u.key, first.sessionId);
    const stop = await api(u.key, "POST", `/v1/sessions/${first.sessionId}/stop`);
    expect(await stop.json()).toEqual({ ok: true, stopped: 0 });
    expect(await history(u.key, first.sessionId)).toEqual(before);
  });

  it("cannot stop another user's turn: 404, and that turn runs on", { timeout: 60_000 }, async () => {
    const { u, sessionId, rest } = await holdingTurn();
    const other = await createUser();
    const res = await api(other.key, "POST", `/v1/sessions/${sessionId}/stop`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
    // Still holding: the owner's stop finds it running.
    expect(await (await api(u.key, "POST", `/v1/sessions/${sessionId}/stop`)).json()).toEqual({ ok: true, stopped: 1 });
    await rest();
  });

  it("refuses an unknown session (404), a blank id (400) and a missing key (401)", async () => {
    const u = await createUser();
    expect((await api(u.key, "POST", "/v1/sessions/ses_nope/stop")).status).toBe(404);
    expect((await api(u.key, "POST", "/v1/sessions/%20/stop")).status).toBe(400);
    expect((await api(null, "POST", "/v1/sessions/ses_nope/stop")).status).toBe(401);
  });
});
