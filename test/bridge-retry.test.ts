/**
 * The model failing after the client answered a pending call: the answer is never lost. The answered round
 * stays in history, the error says what to do, and the same answer sent again continues the turn without the
 * tool running again; a different answer, another call id, a late retry or a new message behave as
 * docs/bridge.md says.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { chatTurn, errorOf, expectWholeHistory, lookupOrder, resume, sessionStub, state } from "./bridge-helpers";
import type { Step } from "./fake-anthropic/worker";
import { api, createUser, saidIn, script, seen, shape, textReply, toolCall } from "./helpers";
import { wipeCounter } from "./test-capability";

// The SDK retries twice: three 529s in a row reach the turn.
const overloaded: Step[] = [{ status: 529 }, { status: 529 }, { status: 529 }];

const toolResults = (messages: { content: { type: string }[] }[]) => messages.flatMap((m) => m.content.filter((b) => b.type === "tool_result"));

/** A session suspended on lookup_order (`toolu_r1`), its answer then failed by an overloaded model. */
async function failedAnswer(answer: Record<string, unknown> = { call_id: "toolu_r1", content: "shipped" }) {
  const u = await createUser();
  await script(u.id, toolCall("lookup_order", { id: "A-17" }, "toolu_r1"), ...overloaded);
  const t = await chatTurn(u.key, { message: "where is my order?", client_tools: [lookupOrder] });
  expect(t.pending?.call_id).toBe("toolu_r1");
  const failed = await resume(u.key, t.sessionId, answer);
  return { u, sessionId: t.sessionId, failed };
}

describe("the model fails after a client tool's answer", () => {
  it("keeps the answered round, says to send the answer again, and the same answer continues the turn without the tool running again", async () => {
    const { u, sessionId, failed } = await failedAnswer();
    expect(shape(failed.events)).toEqual(["session", "tool_result", "error"]);
    expect(failed.end).toMatchObject({ type: "error", code: "model_overloaded", message: expect.stringMatching(/toolu_r1 is kept.*send it again/) });

    // Nothing the user or the client gave is lost, and history is valid as it stands.
    const kept = await state(u.key, sessionId);
    expect(kept.pending).toBeNull();
    expect(kept.session).toMatchObject({ pending: false, message_count: 3 });
    expect(kept.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(saidIn(kept.messages[0] ?? { content: [] })).toBe("where is my order?");
    expect(toolResults(kept.messages)).toEqual([expect.objectContaining({ tool_use_id: "toolu_r1", content: "shipped" })]);
    expectWholeHistory(kept.messages);
    // Nothing is left to expire.
    expect(await runDurableObjectAlarm(sessionStub(u.id, sessionId))).toBe(false);

    await script(u.id, textReply("It shipped yesterday."));
    const retried = await resume(u.key, sessionId, { call_id: "toolu_r1", content: "shipped" });
    expect(shape(retried.events)).toEqual(["session", "tool_result", "done"]);
    expect(retried.events.find((e) => e.type === "tool_result")).toMatchObject({ id: "toolu_r1", name: "lookup_order", ok: true });
    expect(retried.end).toMatchObject({ type: "done", stop_reason: "end_turn", tools_used: ["lookup_order"] });

    // The model was sent exactly what the failed call was sent: the same answer, the same thinking blocks.
    const requests = await seen(u.id);
    expect(requests).toHaveLength(5);
    expect(requests[4]?.messages).toEqual(requests[1]?.messages);
    const after = await state(u.key, sessionId);
    expect(after.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(saidIn(after.messages[3] ?? { content: [] })).toBe("It shipped yesterday.");
    expect(toolResults(after.messages)).toHaveLength(1);
    expect(after.session).toMatchObject({ pending: false, message_count: 4 });

    // The turn went on: the answer is not taken twice.
    const again = await api(u.key, "POST", `/v1/sessions/${sessionId}/tool_result`, { call_id: "toolu_r1", content: "shipped" });
    expect(await errorOf(again)).toMatchObject({ status: 409, code: "conflict", message: expect.stringMatching(/no tool call is pending/) });
  });

  it("as JSON: a 503 that says what to do, and the same answer sent again answers 200", async () => {
    const u = await createUser();
    await script(u.id, toolCall("lookup_order", { id: "9" }, "toolu_j1"), ...overloaded, textReply("Order 9 is on its way."));
    const t = await chatTurn(u.key, { message: "and order 9?", client_tools: [lookupOrder] });
    const body = { call_id: "toolu_j1", content: [{ type: "text", text: "in transit" }], stream: false };
    const failed = await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, body);
    expect(await errorOf(failed)).toMatchObject({
      status: 503,
      code: "model_overloaded",
      message: expect.stringMatching(new RegExp(`toolu_j1 is kept.*POST /v1/sessions/${t.sessionId}/tool_result`)),
    });
    const retried = await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, body);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ reply: "Order 9 is on its way.", stop_reason: "end_turn" });
  });

  it("refuses a different answer or another call id with 409 and changes nothing; the same answer then goes on", async () => {
    const { u, sessionId } = await failedAnswer();
    const before = await state(u.key, sessionId);
    for (const [body, message] of [
      [{ call_id: "toolu_r1", content: "lost in the post" }, /toolu_r1 was already answered .*differs/],
      [{ call_id: "toolu_r1", content: "shipped", is_error: true }, /toolu_r1 was already answered .*differs/],
      [{ call_id: "toolu_other", content: "shipped" }, /toolu_other is not pending.*toolu_r1/],
      [{ call_id: "toolu_r1", content: "shipped", tool_name: "delete_file" }, /does not match/],
    ] as const) {
      const res = await api(u.key, "POST", `/v1/sessions/${sessionId}/tool_result`, body);
      expect(await errorOf(res)).toMatchObject({ status: 409, code: "conflict", message: expect.stringMatching(message) });
    }
    expect(await state(u.key, sessionId)).toEqual(before);
    expect(await seen(u.id)).toHaveLength(4);
    await script(u.id, textReply("It shipped."));
    expect((await resume(u.key, sessionId, { call_id: "toolu_r1", content: "shipped", tool_name: "lookup_order" })).end).toMatchObject({
      type: "done",
    });
  });

  it("a retry the model fails again can be sent once more, also after the session object was evicted", async () => {
    const { u, sessionId } = await failedAnswer();
    await evictDurableObject(sessionStub(u.id, sessionId));
    await script(u.id, ...overloaded, textReply("Third time lucky."));
    const second = await resume(u.key, sessionId, { call_id: "toolu_r1", content: "shipped" });
    expect(second.end).toMatchObject({ type: "error", code: "model_overloaded", message: expect.stringMatching(/toolu_r1 is kept/) });
    expect((await state(u.key, sessionId)).messages).toHaveLength(3);
    await evictDurableObject(sessionStub(u.id, sessionId));
    const third = await resume(u.key, sessionId, { call_id: "toolu_r1", content: "shipped" });
    expect(third.end).toMatchObject({ type: "done" });
    expect(saidIn((await state(u.key, sessionId)).messages.at(-1) ?? { content: [] })).toBe("Third time lucky.");
  });

  it("a new message instead of the retry continues after the kept answer, and the retry is then refused", async () => {
    const { u, sessionId } = await failedAnswer();
    await script(u.id, textReply("Your order shipped; anything else?"));
    const next = await chatTurn(u.key, { message: "so?", session_id: sessionId });
    expect(next.end).toMatchObject({ type: "done" });
    // The model sees the answer, then the new message, in one user message (the API's alternation).
    const last = (await seen(u.id)).at(-1)?.messages.at(-1)?.content as { type: string; [k: string]: unknown }[];
    expect(last[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_r1", content: "shipped" });
    expect(last.at(-1)).toMatchObject({ type: "text", text: "so?" });
    const h = await state(u.key, sessionId);
    expectWholeHistory(h.messages);
    expect(h.messages.map(saidIn).filter((s) => s === "where is my order?")).toHaveLength(1);
    const late = await api(u.key, "POST", `/v1/sessions/${sessionId}/tool_result`, { call_id: "toolu_r1", content: "shipped" });
    expect(await errorOf(late)).toMatchObject({ status: 409, code: "conflict" });
  });

  it("a retry after the continuation's TTL gets 410 saying to send a new message; the answer stays in history", async () => {
    const { u, sessionId } = await failedAnswer();
    await runInDurableObject(sessionStub(u.id, sessionId), (_i, ctx) => {
      ctx.storage.sql.exec("UPDATE state SET value = json_set(value, '$.expires_at', 1) WHERE key = 'retryable_turn'");
    });
    const late = await api(u.key, "POST", `/v1/sessions/${sessionId}/tool_result`, { call_id: "toolu_r1", content: "shipped" });
    expect(await errorOf(late)).toMatchObject({ status: 410, code: "continuation_expired", message: expect.stringMatching(/send a new message/) });
    expect(toolResults((await state(u.key, sessionId)).messages)).toEqual([expect.objectContaining({ content: "shipped" })]);
    expect(await seen(u.id)).toHaveLength(4);
  });

  it("after the last of several calls: the retry names that call, and a further tool round the model had finished stays done", async () => {
    const u = await createUser();
    const parallel: Step = {
      reply: {
        content: [
          { type: "tool_use", id: "toolu_p1", name: "lookup_order", input: { id: "1" } },
          { type: "tool_use", id: "toolu_p2", name: "lookup_order", input: { id: "2" } },
        ],
      },
    };
    await script(u.id, parallel, toolCall("current_time", {}, "toolu_clock"), ...overloaded);
    const t = await chatTurn(u.key, { message: "orders 1 and 2?", client_tools: [lookupOrder] });
    expect(t.pending?.pending_calls.map((p) => p.call_id)).toEqual(["toolu_p1", "toolu_p2"]);
    expect((await resume(u.key, t.sessionId, { call_id: "toolu_p1", content: "one: shipped" })).pending?.call_id).toBe("toolu_p2");
    const failed = await resume(u.key, t.sessionId, { call_id: "toolu_p2", content: "two: packed" });
    expect(failed.end).toMatchObject({ type: "error", code: "model_overloaded" });
    // The clock round the model completed before failing is kept with the answers.
    const kept = await state(u.key, t.sessionId);
    expect(kept.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(toolResults(kept.messages).map((b) => (b as { tool_use_id?: string }).tool_use_id)).toEqual(["toolu_p1", "toolu_p2", "toolu_clock"]);
    expectWholeHistory(kept.messages);

    const first = await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, { call_id: "toolu_p1", content: "one: shipped" });
    expect(await errorOf(first)).toMatchObject({ status: 409, message: expect.stringMatching(/toolu_p2/) });
    await script(u.id, textReply("One shipped, two packed."));
    const retried = await resume(u.key, t.sessionId, { call_id: "toolu_p2", content: "two: packed" });
    expect(retried.end).toMatchObject({ type: "done", tools_used: ["lookup_order", "lookup_order", "current_time"] });
    const requests = await seen(u.id);
    // The retry is the failed call again: the clock did not run a second time.
    expect(requests.at(-1)?.messages).toEqual(requests.at(-2)?.messages);
    expect(toolResults((await state(u.key, t.sessionId)).messages)).toHaveLength(3);
  });

  it("a retry that suspends again arms the continuation's deadline anew", async () => {
    const { u, sessionId } = await failedAnswer();
    await script(u.id, toolCall("lookup_order", { id: "A-18" }, "toolu_r2"), textReply("Both shipped."));
    const retried = await resume(u.key, sessionId, { call_id: "toolu_r1", content: "shipped" });
    expect(retried.pending).toMatchObject({ call_id: "toolu_r2", expires_at: expect.any(Number) });
    expect(retried.pending?.expires_at).toBeGreaterThan(Date.now() + 30 * 60 * 1000 - 60_000);
    // The alarm is set: run before the deadline, it keeps the call pending.
    expect(await runDurableObjectAlarm(sessionStub(u.id, sessionId))).toBe(true);
    expect((await state(u.key, sessionId)).pending?.call_id).toBe("toolu_r2");
    expect((await resume(u.key, sessionId, { call_id: "toolu_r2", content: "shipped too" })).end).toMatchObject({ type: "done" });
  });
});

describe("the model fails after an approved server tool ran", () => {
  it("keeps the tool's result; the same approval sent again continues without running the tool twice", async () => {
    const u = await createUser();
    await script(u.id, toolCall("wipe_cache", {}, "toolu_w1"), ...overloaded, textReply("Cache wiped."));
    const t = await chatTurn(u.key, { message: "wipe the cache" });
    expect(t.pending).toMatchObject({ call_id: "toolu_w1", pending_calls: [expect.objectContaining({ runs: "server" })] });
    const before = wipeCounter.wipes;
    const failed = await resume(u.key, t.sessionId, { call_id: "toolu_w1", action: "allow", tool_name: "wipe_cache" });
    expect(failed.end).toMatchObject({ type: "error", code: "model_overloaded", message: expect.stringMatching(/toolu_w1 is kept/) });
    expect(wipeCounter.wipes).toBe(before + 1);
    expect(toolResults((await state(u.key, t.sessionId)).messages)).toEqual([expect.objectContaining({ content: `wiped (${before + 1})` })]);

    // The user cannot take the approval back once the tool ran.
    const deny = await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, { call_id: "toolu_w1", action: "deny" });
    expect(await errorOf(deny)).toMatchObject({ status: 409, code: "conflict", message: expect.stringMatching(/already answered/) });
    const retried = await resume(u.key, t.sessionId, { call_id: "toolu_w1", action: "allow", tool_name: "wipe_cache" });
    expect(retried.end).toMatchObject({ type: "done" });
    expect(retried.events.find((e) => e.type === "tool_result")).toMatchObject({ id: "toolu_w1", ok: true });
    expect(wipeCounter.wipes).toBe(before + 1);
    const h = await state(u.key, t.sessionId);
    expect(toolResults(h.messages)).toHaveLength(1);
    expect(saidIn(h.messages.at(-1) ?? { content: [] })).toBe("Cache wiped.");
  });
});
