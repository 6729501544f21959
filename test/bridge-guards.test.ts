import { describe, expect, it } from "vitest";
import { DENIED, MAX_IMAGE_BASE64_CHARS } from "../src/bridge/answer";
import { type Block, chatTurn, deleteFile, errorOf, expectWholeHistory, lookupOrder, resume, state } from "./bridge-helpers";
import { api, createUser, script, seen, shape, textReply, toolCall } from "./helpers";
import { withEnv } from "./limits-helpers";
import { wipeCounter } from "./test-capability";

// wipe_cache (needs approval) and show_context come from the test Worker's capability.

const lastSent = async (userId: string) => (await seen(userId)).at(-1)?.messages.at(-1)?.content as Block[];

/** A session suspended on a client tool call `toolu_g1`, ready for guard checks. */
async function suspended(tool = "lookup_order") {
  const u = await createUser();
  await script(u.id, toolCall(tool, { id: "1" }, "toolu_g1"), textReply("done"));
  const t = await chatTurn(u.key, { message: "go", client_tools: [lookupOrder, deleteFile] });
  expect(t.pending?.call_id).toBe("toolu_g1");
  return { u, sessionId: t.sessionId };
}

const image = (data: string) => ({ type: "image", source: { type: "base64", media_type: "image/png", data } });

describe("tool_result guards: a clear 4xx and nothing changed", () => {
  const cases: [string, (sessionId: string) => [string, unknown], number, string, RegExp?][] = [
    ["a blank session id", () => ["/v1/sessions/%20/tool_result", { call_id: "toolu_g1", content: "x" }], 400, "invalid_request", /session id/],
    ["an empty session id", () => ["/v1/sessions//tool_result", { call_id: "toolu_g1", content: "x" }], 404, "not_found"],
    ["a missing call_id", (s) => [`/v1/sessions/${s}/tool_result`, { content: "x" }], 400, "invalid_request", /call_id is required/],
    ["a blank call_id", (s) => [`/v1/sessions/${s}/tool_result`, { call_id: " ", content: "x" }], 400, "invalid_request", /call_id is required/],
    ["neither action nor content", (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1" }], 400, "invalid_request", /content .* or action/],
    ["an unknown session", () => ["/v1/sessions/ses_nope/tool_result", { call_id: "toolu_g1", content: "x" }], 404, "not_found"],
    [
      "a call_id mismatch",
      (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_other", content: "x" }],
      409,
      "conflict",
      /not pending; pending: toolu_g1/,
    ],
    [
      "allow without tool_name",
      (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1", action: "allow" }],
      400,
      "invalid_request",
      /tool_name is required/,
    ],
    [
      "always without tool_name",
      (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1", action: "always" }],
      400,
      "invalid_request",
      /tool_name is required/,
    ],
    [
      "a tool_name that is not the pending one",
      (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1", content: "x", tool_name: "delete_file" }],
      409,
      "conflict",
      /does not match/,
    ],
    [
      "a client tool allowed without content",
      (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1", action: "allow", tool_name: "lookup_order" }],
      400,
      "invalid_request",
      /runs on the client/,
    ],
    ["an unknown action", (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1", action: "maybe" }], 400, "invalid_request"],
    ["deny with content", (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1", action: "deny", content: "x" }], 400, "invalid_request"],
    ["a non-string content", (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1", content: 42 }], 400, "invalid_request"],
    [
      "an image with empty data",
      (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1", content: [image("")] }],
      400,
      "invalid_request",
      /data is empty/,
    ],
    [
      "an image whose data is not base64",
      (s) => [`/v1/sessions/${s}/tool_result`, { call_id: "toolu_g1", content: [{ type: "text", text: "here" }, image("this is not base64!")] }],
      400,
      "invalid_request",
      /must be base64/,
    ],
  ];
  for (const [name, request, status, code, message] of cases) {
    it(`rejects ${name} with ${status} ${code}`, async () => {
      const { u, sessionId } = await suspended();
      const [path, body] = request(sessionId);
      const err = await errorOf(await api(u.key, "POST", path, body));
      expect(err).toMatchObject({ status, code });
      if (message) expect(err.message).toMatch(message);
      const after = await state(u.key, sessionId);
      expect(after.pending).toMatchObject({ call_id: "toolu_g1", answered: [] });
      expect(after.messages).toHaveLength(1);
      expect(await seen(u.id)).toHaveLength(1);
    });
  }

  it("answers 409 when no tool call is pending", async () => {
    const u = await createUser();
    await script(u.id, textReply("hi"));
    const t = await chatTurn(u.key, { message: "hello" });
    const err = await errorOf(await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, { call_id: "toolu_1", content: "x" }));
    expect(err).toMatchObject({ status: 409, code: "conflict", message: "no tool call is pending in this session" });
  });

  it("never lets another user's key reach a pending session", async () => {
    const { u, sessionId } = await suspended();
    const mallory = await createUser();
    for (const [method, path, body] of [
      ["POST", `/v1/sessions/${sessionId}/tool_result`, { call_id: "toolu_g1", content: "forged" }],
      ["DELETE", `/v1/sessions/${sessionId}/pending`, undefined],
      ["GET", `/v1/sessions/${sessionId}`, undefined],
    ] as const) {
      expect(await errorOf(await api(mallory.key, method, path, body))).toMatchObject({ status: 404, code: "not_found" });
    }
    expect((await state(u.key, sessionId)).pending?.call_id).toBe("toolu_g1");
  });

  it("lets exactly one of two simultaneous resumes proceed; the other gets 409", async () => {
    const { u, sessionId } = await suspended();
    const body = { call_id: "toolu_g1", content: "result" };
    const [a, b] = await Promise.all([
      api(u.key, "POST", `/v1/sessions/${sessionId}/tool_result`, body),
      api(u.key, "POST", `/v1/sessions/${sessionId}/tool_result`, body),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const loser = a.status === 409 ? a : b;
    const lost = await errorOf(loser);
    expect(["session_busy", "conflict"]).toContain(lost.code);
    await (a.status === 200 ? a : b).text();
    const h = await state(u.key, sessionId);
    expect(h.messages.filter((m) => m.content.some((c) => c.type === "tool_result"))).toHaveLength(1);
    expect(await seen(u.id)).toHaveLength(2);
  });
});

describe("approvals", () => {
  it("deny needs no tool_name and feeds the model an is_error tool_result", async () => {
    const { u, sessionId } = await suspended("delete_file");
    const t = await resume(u.key, sessionId, { call_id: "toolu_g1", action: "deny" });
    expect(t.events.find((e) => e.type === "tool_result")).toMatchObject({ id: "toolu_g1", name: "delete_file", ok: false });
    expect(await lastSent(u.id)).toEqual([{ type: "tool_result", tool_use_id: "toolu_g1", content: DENIED, is_error: true }]);
    expectWholeHistory((await state(u.key, sessionId)).messages);
  });

  it("a client tool's result is used as-is, never run here, with is_error and content blocks passed through", async () => {
    const { u, sessionId } = await suspended("delete_file");
    const content = [{ type: "text", text: "permission denied: /x" }];
    await resume(u.key, sessionId, { call_id: "toolu_g1", action: "allow", tool_name: "delete_file", content, is_error: true });
    expect(await lastSent(u.id)).toEqual([{ type: "tool_result", tool_use_id: "toolu_g1", content, is_error: true }]);
  });

  it("pauses a builtin that needs approval, and runs it here once allowed", async () => {
    const u = await createUser();
    await script(u.id, toolCall("wipe_cache", {}, "toolu_a1"), textReply("Cache wiped."));
    const t = await chatTurn(u.key, { message: "wipe the cache" });
    expect(t.pending).toMatchObject({ tool_name: "wipe_cache", pending_calls: [{ runs: "server", needs_approval: true }] });
    expect(t.events.find((e) => e.type === "tool_use")).toMatchObject({ reason: "Wiping the cache" });
    const before = wipeCounter.wipes;
    const err = await errorOf(await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, { call_id: "toolu_a1", content: "fake" }));
    expect(err).toMatchObject({ status: 400, message: expect.stringMatching(/runs on the server/) });
    const r = await resume(u.key, t.sessionId, { call_id: "toolu_a1", action: "allow", tool_name: "wipe_cache" });
    expect(wipeCounter.wipes).toBe(before + 1);
    expect(r.events.find((e) => e.type === "tool_result")).toMatchObject({ name: "wipe_cache", ok: true });
    expect(await lastSent(u.id)).toEqual([{ type: "tool_result", tool_use_id: "toolu_a1", content: `wiped (${wipeCounter.wipes})` }]);
  });

  it("always remembers the tool for the session: later calls skip the pause", async () => {
    const u = await createUser();
    await script(u.id, toolCall("wipe_cache", {}, "toolu_w1"), textReply("Wiped."), toolCall("wipe_cache", {}, "toolu_w2"), textReply("Wiped again."));
    const first = await chatTurn(u.key, { message: "wipe" });
    await resume(u.key, first.sessionId, { call_id: "toolu_w1", action: "always", tool_name: "wipe_cache" });
    const second = await chatTurn(u.key, { message: "wipe again", session_id: first.sessionId });
    expect(second.pending).toBeNull();
    expect(shape(second.events)).toEqual(["session", "tool_use", "tool_result", "done"]);
    // Another session of the same user still asks.
    await script(u.id, toolCall("wipe_cache", {}, "toolu_w3"));
    expect((await chatTurn(u.key, { message: "wipe" })).pending?.tool_name).toBe("wipe_cache");
  });

  it("always on a client tool: the next call of it no longer needs approval, and covers its parallel twin", async () => {
    const u = await createUser();
    const twin = { reply: { content: [0, 1].map((i) => ({ type: "tool_use" as const, id: `toolu_t${i}`, name: "delete_file", input: { path: `/f${i}` } })) } };
    await script(u.id, twin, textReply("Deleted both."), toolCall("delete_file", { path: "/g" }, "toolu_t2"));
    const first = await chatTurn(u.key, { message: "delete f0 and f1", client_tools: [deleteFile] });
    expect(first.pending?.pending_calls.map((p) => p.needs_approval)).toEqual([true, true]);
    const mid = await resume(u.key, first.sessionId, { call_id: "toolu_t0", action: "always", tool_name: "delete_file", content: "deleted" });
    expect(mid.pending?.pending_calls).toEqual([expect.objectContaining({ call_id: "toolu_t1", needs_approval: false })]);
    await resume(u.key, first.sessionId, { call_id: "toolu_t1", content: "deleted" });
    const next = await chatTurn(u.key, { message: "delete /g", session_id: first.sessionId, client_tools: [deleteFile] });
    expect(next.pending?.pending_calls[0]).toMatchObject({ call_id: "toolu_t2", needs_approval: false });
  });

  it("an image a client tool returns goes to the model as sent; one larger than the Messages API takes is refused first, the call still pending", async () => {
    const { u, sessionId } = await suspended();
    // A deployment that raised its body limit past the API's 5 MiB of base64 per image.
    const call = withEnv({ MAX_BODY_BYTES: String(8 * 1024 * 1024) });
    const over = await errorOf(
      await call(u.key, "POST", `/v1/sessions/${sessionId}/tool_result`, { call_id: "toolu_g1", content: [image("A".repeat(MAX_IMAGE_BASE64_CHARS + 4))] }),
    );
    expect(over).toMatchObject({ status: 400, code: "invalid_request", message: expect.stringMatching(/at most 5242880 characters/) });
    expect((await state(u.key, sessionId)).pending).toMatchObject({ call_id: "toolu_g1", answered: [] });
    expect(await seen(u.id)).toHaveLength(1);
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    await resume(u.key, sessionId, { call_id: "toolu_g1", content: [image(png)] });
    expect(await lastSent(u.id)).toEqual([{ type: "tool_result", tool_use_id: "toolu_g1", content: [image(png)] }]);
  });

  it("a stream:false resume of an SSE turn answers JSON", async () => {
    const { u, sessionId } = await suspended();
    const res = await api(u.key, "POST", `/v1/sessions/${sessionId}/tool_result`, { call_id: "toolu_g1", content: "ok", stream: false });
    expect(await res.json()).toMatchObject({ session_id: sessionId, reply: "done", stop_reason: "end_turn" });
  });
});

describe("a resumed turn's tools", () => {
  it("see the prompt sections of the turn that suspended, and its per-turn counters", async () => {
    const u = await createUser();
    expect((await api(u.key, "PUT", "/v1/brain/soul", { content: "The user likes short answers." })).status).toBe(200);
    await script(
      u.id,
      toolCall("show_context", {}, "toolu_s1"),
      toolCall("lookup_order", { id: "1" }, "toolu_s2"),
      toolCall("show_context", {}, "toolu_s3"),
      textReply("ok"),
    );
    const t = await chatTurn(u.key, { message: "go", client_tools: [lookupOrder] });
    const before = (await seen(u.id))[1]?.messages.at(-1)?.content as Block[];
    const first = JSON.parse(String(before[0]?.content)) as { sections: [string, string[]][]; calls: number };
    expect(first.sections.map(([name]) => name)).toContain("brain.soul");
    expect(first.calls).toBe(1);
    await resume(u.key, t.sessionId, { call_id: "toolu_s2", content: "ok" });
    const after = (await seen(u.id))[3]?.messages.at(-1)?.content as Block[];
    expect(JSON.parse(String(after[0]?.content))).toEqual({ sections: first.sections, calls: 2 });
  });
});
