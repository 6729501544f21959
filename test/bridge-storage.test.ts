import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type Continuation, decodeContinuation, encodeContinuation } from "../src/bridge/continuation";
import { loadConfig } from "../src/config/config";
import type { Env } from "../src/config/env";
import { SessionStorage } from "../src/sessions/storage";
import { type Block, chatTurn, errorOf, expectWholeHistory, lookupOrder, resume, sessionStub, state } from "./bridge-helpers";
import { api, createUser, script, seen, textReply, toolCall } from "./helpers";

/** A small seeded PRNG, so a failing case can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NASTY = [
  '"',
  "\\",
  "\n",
  "\r",
  "\t",
  "\u0000",
  "\u001f",
  "'",
  "/",
  "<",
  "é",
  "ü",
  "中",
  "🎉",
  "\u2028",
  "\u2029",
  "\ud800",
  '\\"',
  "\\n",
  "{",
  "}",
  "[",
  "]",
  ":",
  ",",
  "a",
  "Z",
  "0",
  " ",
];

const nastyString = (rnd: () => number) => Array.from({ length: Math.floor(rnd() * 40) }, () => NASTY[Math.floor(rnd() * NASTY.length)]).join("");

function nastyValue(rnd: () => number, depth = 0): unknown {
  const r = rnd();
  if (depth > 2 || r < 0.4) return nastyString(rnd);
  if (r < 0.5) return Math.floor(rnd() * 1e6) / 100;
  if (r < 0.55) return rnd() < 0.5;
  if (r < 0.6) return null;
  if (r < 0.8) return Array.from({ length: Math.floor(rnd() * 4) }, () => nastyValue(rnd, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, () => [nastyString(rnd), nastyValue(rnd, depth + 1)]));
}

function nastyContinuation(rnd: () => number): Continuation {
  const input = { note: nastyString(rnd), nested: nastyValue(rnd) };
  const text = nastyString(rnd);
  return {
    v: 2,
    user_id: "usr_prop",
    session_id: "ses_prop",
    site_id: null,
    project_id: nastyString(rnd),
    model: "m",
    system: nastyString(rnd),
    messages: [
      {
        role: "assistant",
        content: [
          { type: "text", text },
          { type: "tool_use", id: "toolu_p", name: "lookup_order", input },
        ],
      },
    ],
    results: [{ type: "tool_result", tool_use_id: "toolu_q", content: nastyString(rnd) }],
    pending: [{ call_id: "toolu_p", tool_name: "lookup_order", tool_input: input, runs: "client", needs_approval: false }],
    client_tools: [{ ...lookupOrder, description: nastyString(rnd), input_schema: { type: "object", description: nastyString(rnd) }, needs_approval: false }],
    server_tools: ["current_time"],
    tools_used: ["lookup_order"],
    iterations: 1,
    usage: { input_tokens: 1, output_tokens: 2 },
    counters: { [nastyString(rnd)]: 1 },
    injected: { [nastyString(rnd)]: [nastyString(rnd)] },
    stream: true,
    created_at: 1,
    expires_at: Date.now() + 60_000,
  };
}

describe("continuation storage", () => {
  it("round-trips quotes, backslashes, newlines and unicode byte-identically (property, 300 cases)", async () => {
    const stub = env.SESSIONS.get(env.SESSIONS.idFromName("property/round-trip"));
    await runInDurableObject(stub, (_instance, ctx) => {
      const store = new SessionStorage(ctx.storage);
      for (let seed = 1; seed <= 300; seed++) {
        const c = nastyContinuation(random(seed));
        const bytes = encodeContinuation(c);
        const decoded = decodeContinuation(bytes);
        expect(decoded, `seed ${seed}`).toEqual(c);
        expect(JSON.stringify(decoded?.messages), `seed ${seed}`).toBe(JSON.stringify(c.messages));
        expect(decoded && encodeContinuation(decoded), `seed ${seed}`).toBe(bytes);
        store.saveContinuation(c);
        const back = store.continuation();
        expect(back && encodeContinuation(back), `seed ${seed}`).toBe(bytes);
        // Stored as one JSON value: the messages are an array, not a string holding JSON.
        const row = ctx.storage.sql
          .exec<{ t: string; note: string }>(
            "SELECT json_type(body, '$.messages') AS t, json_extract(body, '$.messages[0].content[1].input.note') AS note FROM continuation",
          )
          .one();
        expect(row.t).toBe("array");
        const note = (c.pending[0].tool_input as { note: string }).note;
        if (!note.includes("\ud800")) expect(row.note, `seed ${seed}`).toBe(note);
      }
    });
  });

  it("refuses to store messages that are a string of JSON (escaped twice)", async () => {
    const stub = env.SESSIONS.get(env.SESSIONS.idFromName("property/double-escape"));
    await runInDurableObject(stub, (_instance, ctx) => {
      new SessionStorage(ctx.storage);
      const c = nastyContinuation(random(7));
      const escaped = JSON.stringify({ ...c, messages: JSON.stringify(c.messages) });
      expect(() => ctx.storage.sql.exec("INSERT INTO continuation (slot, v, body, expires_at) VALUES (1, 2, ?, 0)", escaped)).toThrow();
      expect(decodeContinuation(escaped)).toBeNull();
    });
  });

  it("keeps a resumed turn's messages byte-identical end to end", async () => {
    const u = await createUser();
    const rnd = random(42);
    const input = { note: `${nastyString(rnd)}"\\\n🎉`, deep: nastyValue(rnd) };
    // A lone surrogate is not valid Unicode: the API refuses it in a request body (400), so the client's answer has none.
    const output = `${nastyString(rnd)}"quoted" \\ back\nslash ✓ \u2028`.replaceAll("\ud800", "");
    await script(u.id, { ...toolCall("lookup_order", input, "toolu_rt"), chunk: 3, split_bytes: 5 }, textReply("ok"));
    const t = await chatTurn(u.key, { message: "go", client_tools: [lookupOrder] });
    expect(t.pending?.tool_input).toEqual(input);
    await resume(u.key, t.sessionId, { call_id: "toolu_rt", content: output });
    const sent = (await seen(u.id))[1]?.messages;
    expect((sent?.at(-2)?.content as Block[] | undefined)?.find((b) => b.type === "tool_use")?.input).toEqual(input);
    expect(sent?.at(-1)?.content).toEqual([{ type: "tool_result", tool_use_id: "toolu_rt", content: output }]);
    const h = await state(u.key, t.sessionId);
    expect(JSON.stringify(h.messages[1]?.content)).toBe(JSON.stringify(sent?.at(-2)?.content));
    expect(JSON.stringify(h.messages[2]?.content)).toBe(JSON.stringify(sent?.at(-1)?.content));
  });
});

describe("durability", () => {
  it("survives Durable Object eviction between suspend and resume", async () => {
    const u = await createUser();
    await script(u.id, toolCall("lookup_order", { id: "7" }, "toolu_ev"), textReply("Still here."));
    const t = await chatTurn(u.key, { message: "go", client_tools: [lookupOrder] });
    await evictDurableObject(sessionStub(u.id, t.sessionId));
    const r = await resume(u.key, t.sessionId, { call_id: "toolu_ev", content: "ok" });
    expect(r.end).toMatchObject({ type: "done", stop_reason: "end_turn" });
    // The client tools came back from storage too.
    expect((await seen(u.id))[1]?.tools?.map((x) => x.name)).toContain("lookup_order");
  });

  const expire = (userId: string, sessionId: string) =>
    runInDurableObject(sessionStub(userId, sessionId), (_i, ctx) => {
      ctx.storage.sql.exec("UPDATE continuation SET expires_at = 1, body = json_set(body, '$.expires_at', 1)");
    });

  it("expires after the TTL: the alarm clears it, history stays whole, and a late answer gets 410", async () => {
    const u = await createUser();
    await script(u.id, toolCall("lookup_order", { id: "1" }, "toolu_ttl"), textReply("Let's start over."));
    const t = await chatTurn(u.key, { message: "go", client_tools: [lookupOrder] });
    expect(t.pending?.expires_at).toBeGreaterThan(Date.now() + 30 * 60 * 1000 - 60_000);
    // An alarm that fires before the deadline changes nothing.
    expect(await runDurableObjectAlarm(sessionStub(u.id, t.sessionId))).toBe(true);
    expect((await state(u.key, t.sessionId)).pending?.call_id).toBe("toolu_ttl");
    await expire(u.id, t.sessionId);
    expect(await runDurableObjectAlarm(sessionStub(u.id, t.sessionId))).toBe(true);
    const h = await state(u.key, t.sessionId);
    expect(h.pending).toBeNull();
    expect(h.session.pending).toBe(false);
    expectWholeHistory(h.messages);
    expect(h.messages[2]?.content[0]).toMatchObject({ type: "tool_result", is_error: true, content: expect.stringMatching(/in time/) });
    const late = await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, { call_id: "toolu_ttl", content: "late" });
    expect(await errorOf(late)).toMatchObject({ status: 410, code: "continuation_expired" });
    expect((await chatTurn(u.key, { message: "hello?", session_id: t.sessionId })).end).toMatchObject({ type: "done" });
  });

  it("treats a continuation past its deadline as expired even before the alarm runs", async () => {
    const u = await createUser();
    await script(u.id, toolCall("lookup_order", { id: "1" }, "toolu_lazy"));
    const t = await chatTurn(u.key, { message: "go", client_tools: [lookupOrder] });
    await expire(u.id, t.sessionId);
    const late = await api(u.key, "POST", `/v1/sessions/${t.sessionId}/tool_result`, { call_id: "toolu_lazy", content: "late" });
    expect(await errorOf(late)).toMatchObject({ status: 410, code: "continuation_expired" });
    expect((await state(u.key, t.sessionId)).pending).toBeNull();
  });

  it("reads the TTL from CONTINUATION_TTL_SECONDS, and names a bad value", () => {
    const base = {} as Env;
    expect(loadConfig(base).continuationTtlMs).toBe(30 * 60 * 1000);
    expect(loadConfig({ ...base, CONTINUATION_TTL_SECONDS: "60" }).continuationTtlMs).toBe(60_000);
    expect(() => loadConfig({ ...base, CONTINUATION_TTL_SECONDS: "soon" })).toThrow(/CONTINUATION_TTL_SECONDS/);
    expect(() => loadConfig({ ...base, CONTINUATION_TTL_SECONDS: "1" })).toThrow(/at least 5/);
  });
});

describe("a stored continuation no format describes", () => {
  it("is not pending: the session takes the next turn", async () => {
    const u = await createUser();
    await script(u.id, textReply("first"), textReply("second"));
    const t = await chatTurn(u.key, { message: "hello" });
    await runInDurableObject(sessionStub(u.id, t.sessionId), (_i, ctx) => {
      const blob = { v: 1, call_id: "toolu_old", tool_name: "lookup_order", expires_at: Date.now() + 60_000 };
      ctx.storage.sql.exec("INSERT INTO continuation (slot, v, body, expires_at) VALUES (1, 1, ?, ?)", JSON.stringify(blob), blob.expires_at);
    });
    expect((await state(u.key, t.sessionId)).pending).toBeNull();
    const next = await chatTurn(u.key, { message: "again", session_id: t.sessionId });
    expect(next.end).toMatchObject({ type: "done" });
  });
});
