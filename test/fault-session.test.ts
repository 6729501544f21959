/**
 * Faults around the session: its Durable Object killed or evicted while a tool call is pending, and D1
 * failing during a turn (the reads before the model call, the bookkeeping batch after it, the usage row).
 * The continuation survives, a tool runs once, usage is not lost, and the session takes the next turn.
 */
import { abortAllDurableObjects, evictDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatEvent } from "../src/core/events";
import { errorOf, expectWholeHistory, lookupOrder, resume, sessionStub, state } from "./bridge-helpers";
import { count, failWrites, repairAll, takeDown } from "./fault-helpers";
import { api, chat, createUser, history, saidIn, script, seen, textReply, toolCall } from "./helpers";
import { userD1 } from "./shard-helpers";
import { wipeCounter } from "./test-capability";

afterEach(repairAll);

const tokens = async (userId: string) =>
  (
    await (
      await userD1(userId)
    )
      .prepare("SELECT coalesce(sum(input_tokens + output_tokens), 0) n, count(*) c FROM usage WHERE user_id = ? AND kind = 'chat'")
      .bind(userId)
      .first<{ n: number; c: number }>()
  )?.n ?? 0;

/** The tokens the turns' `done` events reported. */
const spentBy = (turns: { events: ChatEvent[] }[]) =>
  turns.reduce((sum, t) => {
    const done = t.events.findLast((e) => e.type === "done");
    return sum + (done?.type === "done" ? done.usage.input_tokens + done.usage.output_tokens : 0);
  }, 0);

describe("Durable Object killed while a tool is pending", () => {
  it("a hard abort between suspend and approval: the continuation survives, the approved tool runs once, a repeated answer is refused", async () => {
    const u = await createUser();
    await script(u.id, toolCall("wipe_cache", {}, "toolu_k1"), textReply("Cache wiped."));
    const t = await chat(u.key, { message: "wipe the cache" });
    expect(t.events.at(-1)).toMatchObject({ type: "tool_pending", tool_name: "wipe_cache" });
    await abortAllDurableObjects();
    expect((await state(u.key, t.sessionId)).pending?.pending_calls).toEqual([expect.objectContaining({ call_id: "toolu_k1" })]);
    const before = wipeCounter.wipes;
    const r = await resume(u.key, t.sessionId, { call_id: "toolu_k1", action: "allow", tool_name: "wipe_cache" });
    expect(r.end).toMatchObject({ type: "done" });
    const again = await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, { call_id: "toolu_k1", action: "allow", tool_name: "wipe_cache" });
    expect(await errorOf(again)).toMatchObject({ status: 409 });
    expect(wipeCounter.wipes).toBe(before + 1);
    const s = await state(u.key, t.sessionId);
    expect(s.pending).toBeNull();
    expect(s.session).toMatchObject({ pending: false, message_count: s.messages.length });
    expectWholeHistory(s.messages);
    await script(u.id, textReply("Next turn."));
    expect((await chat(u.key, { message: "thanks", session_id: t.sessionId })).text).toBe("Next turn.");
  });

  it("evicted twice around a client tool answer: the answer is applied once and the model continues once", async () => {
    const u = await createUser();
    await script(u.id, toolCall("lookup_order", { id: "7" }, "toolu_k2"), textReply("Order 7 shipped."));
    const t = await chat(u.key, { message: "where is order 7?", client_tools: [lookupOrder] });
    await evictDurableObject(sessionStub(u.id, t.sessionId));
    const r = await resume(u.key, t.sessionId, { call_id: "toolu_k2", content: "shipped" });
    expect(r.end).toMatchObject({ type: "done" });
    await evictDurableObject(sessionStub(u.id, t.sessionId));
    const again = await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, { call_id: "toolu_k2", content: "shipped" });
    expect((await errorOf(again)).status).toBe(409);
    expect(await seen(u.id)).toHaveLength(2);
    const h = await history(u.key, t.sessionId);
    expect(h.messages.filter((m) => m.content.some((b) => b.type === "tool_result"))).toHaveLength(1);
    expect(saidIn(h.messages.at(-1) ?? { content: [] })).toBe("Order 7 shipped.");
  });
});

describe("D1 errors mid-turn", () => {
  it("a failing read before the model call: a clean 500, nothing stored, and the session works once D1 is back", async () => {
    const u = await createUser();
    const first = await chat(u.key, { message: "hello" });
    const repair = await takeDown("usage");
    const res = await api(u.key, "POST", "/v1/chat", { message: "this one fails", session_id: first.sessionId });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: { code: "internal", request_id: expect.any(String) } });
    await repair();
    await script(u.id, textReply("back"));
    expect((await chat(u.key, { message: "again", session_id: first.sessionId })).text).toBe("back");
    expect((await history(u.key, first.sessionId)).messages.map(saidIn)).toEqual(["hello", "fake reply", "again", "back"]);
  });

  it("a failing bookkeeping batch (the audit row): the turn completes, its usage and the session's counts are still written", async () => {
    const u = await createUser();
    await failWrites("context_logs", u.id);
    await script(u.id, textReply("answered anyway"));
    const t = await chat(u.key, { message: "hi" });
    expect(t.text).toBe("answered anyway");
    expect(t.events.at(-1)).toMatchObject({ type: "done" });
    expect(await tokens(u.id)).toBeGreaterThan(0);
    expect(await count("SELECT count(*) n FROM sessions WHERE id = ? AND message_count = 2", t.sessionId)).toBe(1);
    expect((await chat(u.key, { message: "and again", session_id: t.sessionId })).events.at(-1)).toMatchObject({ type: "done" });
  });

  it("a failing usage write: the turn completes, and its tokens are recorded by the session's next turn, once", async () => {
    const u = await createUser();
    const turns = [await chat(u.key, { message: "hello" })];
    const sessionId = turns[0]?.sessionId ?? "";
    const repair = await failWrites("usage", u.id);
    turns.push(await chat(u.key, { message: "while usage is failing", session_id: sessionId }));
    expect(turns[1]?.events.at(-1)).toMatchObject({ type: "done" });
    expect(await tokens(u.id)).toBe(spentBy(turns.slice(0, 1)));
    await repair();
    turns.push(await chat(u.key, { message: "after", session_id: sessionId }));
    expect(await tokens(u.id)).toBe(spentBy(turns));
    turns.push(await chat(u.key, { message: "later", session_id: sessionId }));
    expect(await tokens(u.id)).toBe(spentBy(turns));
  });
});
