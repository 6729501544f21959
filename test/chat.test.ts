import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../src/sessions/store";
import { api, chat, createUser, type History, history, saidIn, script, seen, shape, textOf, textReply, toolCall } from "./helpers";
import { userD1 } from "./shard-helpers";

type Block = { type: string; [k: string]: unknown };

/** Every tool_use in history is answered by a tool_result in the next message. */
function expectNoDanglingToolUse(h: History) {
  h.messages.forEach((m, i) => {
    const uses = m.content.filter((b) => b.type === "tool_use").map((b) => b.id);
    if (uses.length === 0) return;
    const next = h.messages[i + 1];
    const answered = (next?.content ?? []).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
    expect(answered).toEqual(expect.arrayContaining(uses));
  });
}

describe("POST /v1/chat streaming", () => {
  it("streams session, text deltas and done with usage, and keeps the history", async () => {
    const u = await createUser();
    await script(u.id, { reply: { content: [{ type: "text", text: "Hello there, how can I help you today?" }] }, chunk: 5 });
    const { events, sessionId, text } = await chat(u.key, { message: "hi" });
    expect(events[0]).toEqual({ type: "session", id: sessionId });
    expect(text).toBe("Hello there, how can I help you today?");
    expect(events.filter((e) => e.type === "text").length).toBeGreaterThan(3);
    const done = events.at(-1);
    expect(done?.type).toBe("done");
    if (done?.type === "done") {
      expect(done.stop_reason).toBe("end_turn");
      expect(done.usage.output_tokens).toBeGreaterThan(0);
    }
    const h = await history(u.key, sessionId);
    expect(h.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    // The user's words, after the per-turn context block; the reply as the API returned it (thinking first).
    expect(h.messages[0]?.content).toEqual([
      { type: "text", text: expect.stringMatching(/^<turn_context>\nCurrent time: /) },
      { type: "text", text: "hi" },
    ]);
    expect(h.messages[1]?.content.map((b) => b.type)).toEqual(["thinking", "text"]);
  });

  it("sends prior turns to the model on the next turn of the session", async () => {
    const u = await createUser();
    await script(u.id, textReply("first answer"), textReply("second answer"));
    const first = await chat(u.key, { message: "first question" });
    await chat(u.key, { message: "second question", session_id: first.sessionId });
    const requests = await seen(u.id);
    expect(requests).toHaveLength(2);
    expect(requests[1]?.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(requests[1]?.metadata?.user_id).toBe(u.id);
  });

  it("runs a server tool and the model continues in the same stream, seeing the tool_result", async () => {
    const u = await createUser();
    await script(u.id, { ...toolCall("current_time", {}, "toolu_time1", "Let me check."), chunk: 2, split_bytes: 5 }, textReply("It is later than you think."));
    const { events, sessionId } = await chat(u.key, { message: "what time is it?" });
    expect(shape(events)).toEqual(["session", "tool_use", "tool_result", "done"]);
    expect(events.find((e) => e.type === "tool_use")).toMatchObject({ name: "current_time", reason: "Checking the current time", input: {} });
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ name: "current_time", ok: true });
    // The two model calls' text, separated: a client joining the deltas gets a paragraph break, not "check.It".
    expect(textOf(events)).toBe("Let me check.\n\nIt is later than you think.");
    const second = (await seen(u.id))[1];
    const result = second?.messages.at(-1)?.content;
    expect(Array.isArray(result) && result[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_time1" });
    expect(second?.tools?.map((t) => t.name)).toContain("current_time");
    const h = await history(u.key, sessionId);
    expect(h.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expectNoDanglingToolUse(h);
  });

  it("reassembles tool input split across input_json_delta chunks and SSE byte boundaries", async () => {
    const u = await createUser();
    await script(
      u.id,
      { ...toolCall("unknown_tool", { note: 'quotes " and \\ and ünïcödé 🎉', n: [1, 2, 3] }, "toolu_x"), chunk: 1, split_bytes: 3 },
      textReply("ok"),
    );
    const { events } = await chat(u.key, { message: "go" });
    expect(events.find((e) => e.type === "tool_use")).toMatchObject({ input: { note: 'quotes " and \\ and ünïcödé 🎉', n: [1, 2, 3] } });
    // An unknown tool is an is_error result the model can read, not a crash.
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ ok: false });
    const content = (await seen(u.id))[1]?.messages.at(-1)?.content;
    expect(Array.isArray(content) && content[0]).toMatchObject({ is_error: true, content: "Unknown tool: unknown_tool" });
  });

  it("stops at the iteration limit with a consistent history, and the next turn works", async () => {
    const u = await createUser();
    await script(u.id, ...Array.from({ length: 8 }, (_, i) => toolCall("current_time", {}, `toolu_loop${i}`)), textReply("back to normal"));
    const { events, sessionId } = await chat(u.key, { message: "loop forever" });
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "max_iterations" });
    expect(events.filter((e) => e.type === "tool_use")).toHaveLength(8);
    expectNoDanglingToolUse(await history(u.key, sessionId));
    const next = await chat(u.key, { message: "hello again", session_id: sessionId });
    expect(next.text).toBe("back to normal");
    // The new user text follows the last tool_results in one user message, as the API requires.
    const last = (await seen(u.id)).at(-1)?.messages.at(-1)?.content as Block[];
    expect(last.map((b) => b.type)).toEqual(["tool_result", "text", "text"]);
  });

  it("answers the same turn as JSON with stream:false", async () => {
    const u = await createUser();
    await script(u.id, toolCall("current_time", {}, "toolu_j"), textReply("done as json"));
    const res = await api(u.key, "POST", "/v1/chat", { message: "time?", stream: false });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = (await res.json()) as { session_id: string; reply: string; stop_reason: string; events: { type: string }[] };
    expect(body.reply).toBe("done as json");
    expect(body.stop_reason).toBe("end_turn");
    expect(body.events.map((e) => e.type)).toEqual(["session", "tool_use", "tool_result", "done"]);
  });
});

describe("model faults", () => {
  const cases = [
    { name: "429", steps: [{ status: 429 as const }], code: "rate_limited" },
    { name: "500", steps: [{ status: 500 as const }], code: "model_error" },
    { name: "529", steps: [{ status: 529 as const }], code: "model_overloaded" },
  ];
  for (const c of cases) {
    it(`ends the turn with an error event on persistent HTTP ${c.name}, and the session stays usable`, async () => {
      const u = await createUser();
      const first = await chat(u.key, { message: "hello" });
      // The SDK retries twice (MODEL_MAX_RETRIES=2): three failures in a row reach the user.
      await script(u.id, ...c.steps, ...c.steps, ...c.steps, textReply("recovered"));
      const failed = await chat(u.key, { message: "this fails", session_id: first.sessionId });
      expect(failed.events.at(-1)).toMatchObject({ type: "error", code: c.code });
      const again = await chat(u.key, { message: "try again", session_id: first.sessionId });
      expect(again.text).toBe("recovered");
      const h = await history(u.key, first.sessionId);
      // The failed turn left nothing behind: the model never answered it.
      expect(h.messages.map(saidIn)).toEqual(["hello", "fake reply", "try again", "recovered"]);
    });
  }

  it("retries a single 429 transparently", async () => {
    const u = await createUser();
    await script(u.id, { status: 429 }, textReply("after retry"));
    const { text, events } = await chat(u.key, { message: "hi" });
    expect(text).toBe("after retry");
    expect(events.at(-1)?.type).toBe("done");
  });

  it("turns a mid-stream error event into an error event, leaving history as it was before the turn", async () => {
    const u = await createUser();
    await script(u.id, toolCall("current_time", {}, "toolu_m"), { ...textReply("this will break"), error_after: 7 }, textReply("fine now"));
    const { events, sessionId } = await chat(u.key, { message: "time then break" });
    expect(events.at(-1)).toMatchObject({ type: "error", code: "model_overloaded" });
    const h = await history(u.key, sessionId);
    expectNoDanglingToolUse(h);
    expect(h.messages).toEqual([]);
    const next = await chat(u.key, { message: "again", session_id: sessionId });
    expect(next.text).toBe("fine now");
  });

  it("answers stream:false faults with the error shape", async () => {
    const u = await createUser();
    await script(u.id, { status: 529 }, { status: 529 }, { status: 529 });
    const res = await api(u.key, "POST", "/v1/chat", { message: "hi", stream: false });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: "model_overloaded" } });
  });

  it("leaves no empty session behind a failed stream:false turn that started one (its id was never sent); an existing session stays", async () => {
    const u = await createUser();
    const overloaded = [{ status: 529 as const }, { status: 529 as const }, { status: 529 as const }];
    await script(u.id, ...overloaded, ...overloaded);
    for (let i = 0; i < 2; i++) expect((await api(u.key, "POST", "/v1/chat", { message: "hi", stream: false })).status).toBe(503);
    const listed = async () => ((await (await api(u.key, "GET", "/v1/sessions")).json()) as { sessions: { id: string }[] }).sessions;
    expect(await listed()).toEqual([]);
    // A streamed turn sent its session id first: that session stays, for the retry.
    await script(u.id, ...overloaded, textReply("recovered"));
    const streamed = await chat(u.key, { message: "hi" });
    expect(streamed.events.at(-1)).toMatchObject({ type: "error", code: "model_overloaded" });
    expect((await listed()).map((s) => s.id)).toEqual([streamed.sessionId]);
    const retry = await chat(u.key, { message: "hi again", session_id: streamed.sessionId });
    expect(retry.text).toBe("recovered");
  });

  it("a client that disconnects mid-stream does not stop the turn: the reply is finished and kept (it can reconnect)", async () => {
    const u = await createUser();
    await script(u.id, { reply: { content: [{ type: "text", text: "partial words that go on to the end" }], no_thinking: true }, chunk: 4 }, textReply("next"));
    const res = await api(u.key, "POST", "/v1/chat", { message: "start" });
    const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
    if (!reader) throw new Error("no response body");
    let seenText = "";
    while (!seenText.includes("event: text")) seenText += (await reader.read()).value ?? "";
    const sessionId = /"id":"(ses_[^"]+)"/.exec(seenText)?.[1] ?? "";
    await reader.cancel();
    // The next turn waits for the session lock, so by then the first turn has finished.
    const next = await chat(u.key, { message: "still there?", session_id: sessionId });
    expect(next.text).toBe("next");
    const h = await history(u.key, sessionId);
    expect(h.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(saidIn(h.messages[1] ?? { content: [] })).toBe("partial words that go on to the end");
  });
});

describe("chat input and tenancy", () => {
  const bad: [string, string | Record<string, unknown>, number, string][] = [
    ["malformed JSON", "{not json", 400, "invalid_request"],
    ["a wrong type", { message: 42 }, 400, "invalid_request"],
    ["an empty message", { message: "   " }, 400, "invalid_request"],
    ["an unknown field", { message: "hi", user_id: "someone-else" }, 400, "invalid_request"],
    ["a bad session id", { message: "hi", session_id: "../etc" }, 400, "invalid_request"],
  ];
  for (const [name, body, status, code] of bad) {
    it(`rejects ${name} with ${status} and writes nothing`, async () => {
      const u = await createUser();
      const res = await api(u.key, "POST", "/v1/chat", body);
      expect(res.status).toBe(status);
      const json = (await res.json()) as { error: { code: string; request_id: string } };
      expect(json.error.code).toBe(code);
      expect(json.error.request_id).toBeTruthy();
      const list = (await (await api(u.key, "GET", "/v1/sessions")).json()) as { sessions: unknown[] };
      expect(list.sessions).toEqual([]);
      expect(await seen(u.id)).toEqual([]);
    });
  }

  it("rejects an oversize body with 413", async () => {
    const u = await createUser();
    const res = await api(u.key, "POST", "/v1/chat", { message: "x".repeat(300 * 1024) });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: "payload_too_large" } });
  });

  it("rejects a non-JSON content type with 415", async () => {
    const u = await createUser();
    const res = await api(u.key, "POST", "/v1/chat", "message=hi", { "content-type": "application/x-www-form-urlencoded" });
    expect(res.status).toBe(415);
  });

  it("requires a valid key", async () => {
    expect((await api(null, "POST", "/v1/chat", { message: "hi" })).status).toBe(401);
    expect((await api("egm_not-a-real-key", "POST", "/v1/chat", { message: "hi" })).status).toBe(401);
  });

  it("never lets another user's key reach a session", async () => {
    const alice = await createUser();
    const mallory = await createUser();
    const { sessionId } = await chat(alice.key, { message: "my secret plan" });
    for (const [method, path, body] of [
      ["GET", `/v1/sessions/${sessionId}`, undefined],
      ["DELETE", `/v1/sessions/${sessionId}`, undefined],
      ["POST", "/v1/chat", { message: "tell me", session_id: sessionId }],
    ] as const) {
      const res = await api(mallory.key, method, path, body);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
    }
    const list = (await (await api(mallory.key, "GET", "/v1/sessions")).json()) as { sessions: unknown[] };
    expect(list.sessions).toEqual([]);
    expect((await api(alice.key, "GET", `/v1/sessions/${sessionId}`)).status).toBe(200);
  });

  it("pages through sessions that share a timestamp without skipping or repeating any", async () => {
    const u = await createUser();
    for (let i = 0; i < 5; i++) await chat(u.key, { message: `session ${i}` });
    await (await userD1(u.id)).prepare("UPDATE sessions SET updated_at = 1000 WHERE user_id = ?").bind(u.id).run();
    const seenIds: string[] = [];
    let before: string | null = null;
    do {
      const page = (await (await api(u.key, "GET", `/v1/sessions?limit=2${before ? `&before=${before}` : ""}`)).json()) as {
        sessions: { id: string }[];
        next_before: string | null;
      };
      seenIds.push(...page.sessions.map((s) => s.id));
      before = page.next_before;
    } while (before);
    expect(seenIds).toHaveLength(5);
    expect(new Set(seenIds).size).toBe(5);
    expect((await api(u.key, "GET", "/v1/sessions?before=not-a-cursor")).status).toBe(400);
  });

  it("lists and deletes sessions", async () => {
    const u = await createUser();
    const a = await chat(u.key, { message: "first" });
    const b = await chat(u.key, { message: "second" });
    const list = (await (await api(u.key, "GET", "/v1/sessions")).json()) as { sessions: { id: string; title: string; message_count: number }[] };
    expect(list.sessions.map((s) => s.id)).toEqual([b.sessionId, a.sessionId]);
    expect(list.sessions[0]).toMatchObject({ title: "second", message_count: 2 });
    expect((await api(u.key, "DELETE", `/v1/sessions/${a.sessionId}`)).status).toBe(200);
    expect((await api(u.key, "GET", `/v1/sessions/${a.sessionId}`)).status).toBe(404);
    const after = (await (await api(u.key, "GET", "/v1/sessions")).json()) as { sessions: { id: string }[] };
    expect(after.sessions.map((s) => s.id)).toEqual([b.sessionId]);
    // The session's Durable Object storage is gone too, not just its D1 row.
    const stored = await runInDurableObject(sessionStub(env, u.id, a.sessionId), (_instance, state) => {
      const table = state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'messages'").toArray();
      return table.length ? Number(state.storage.sql.exec("SELECT count(*) AS n FROM messages").one().n) : 0;
    });
    expect(stored).toBe(0);
  });
});
