/**
 * A turn is never left half-done: every user message that opened a turn is followed in history by an answer
 * (the model's, or a notice standing in for it), so a later turn never sends it again merged with a new message
 * as if the user had asked both at once.
 */
import { abortAllDurableObjects, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import type { Step } from "./fake-anthropic/worker";
import { api, chat, createUser, history, parseSse, type SeenRequest, saidIn, script, seen, shape, textReply } from "./helpers";
import { userD1 } from "./shard-helpers";

const T = 60_000;

/** A reply that is only a tool call, cut mid-input by max_tokens (the thinking a thinking model writes comes before it). */
const cutToolCall = (id: string): Step => ({
  reply: {
    content: [{ type: "tool_use", id, name: "current_time", input: { zone: "Europe/Lisbon" } }],
    stop_reason: "max_tokens",
    truncate_tool_input: true,
  },
});

const roles = (r: SeenRequest | { messages: { role: string }[] } | undefined) => (r?.messages ?? []).map((m) => m.role);
/** What the user said in each user message of a request (the last text block of each). */
const userWords = (r: SeenRequest | undefined) => (r?.messages ?? []).filter((m) => m.role === "user").map((m) => saidIn(m));

describe("a turn the model left without an answer", () => {
  it(
    "a tool call cut by max_tokens leaves a notice in history, so a model that keeps truncating never merges the user's messages",
    async () => {
      const u = await createUser();
      await script(u.id, cutToolCall("toolu_c1"), cutToolCall("toolu_c2"), cutToolCall("toolu_c3"), textReply("It is noon."));
      const first = await chat(u.key, { message: "time in Lisbon?" });
      expect(shape(first.events)).toEqual(["session", "notice", "done"]);
      expect(first.events.at(-1)).toMatchObject({ type: "done", stop_reason: "max_tokens" });
      for (const message of ["and now?", "please try again"]) await chat(u.key, { message, session_id: first.sessionId });
      const last = await chat(u.key, { message: "one more time", session_id: first.sessionId });
      expect(last.text).toBe("It is noon.");

      const h = await history(u.key, first.sessionId);
      expect(roles(h)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
      expect(h.messages.flatMap((m) => m.content).some((b) => b.type === "tool_use")).toBe(false);
      expect(saidIn(h.messages[1] ?? { content: [] })).toMatch(/output limit/);
      // The model got each earlier message as its own turn, with the notice as its answer, and the latest one alone.
      const sent = (await seen(u.id)).at(-1);
      expect(roles(sent)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user"]);
      expect(userWords(sent)).toEqual(["time in Lisbon?", "and now?", "please try again", "one more time"]);
    },
    T,
  );

  it(
    "a reply that is only thinking is answered with a notice too",
    async () => {
      const u = await createUser();
      await script(u.id, { reply: { content: [{ type: "thinking", thinking: "Hmm." }] } }, textReply("Yes."));
      const quiet = await chat(u.key, { message: "are you there?" });
      expect(quiet.events.find((e) => e.type === "notice")).toMatchObject({ code: "empty" });
      await chat(u.key, { message: "hello?", session_id: quiet.sessionId });
      expect(roles(await history(u.key, quiet.sessionId))).toEqual(["user", "assistant", "user", "assistant"]);
      expect(userWords((await seen(u.id)).at(-1))).toEqual(["are you there?", "hello?"]);
    },
    T,
  );
});

describe("a turn the Worker was killed in", () => {
  it(
    "is marked interrupted on the session's next turn: the client is told, and the model never gets the old message as a fresh request",
    async () => {
      const u = await createUser();
      // The second turn's model call never answers: the session's object is killed while it waits.
      await script(u.id, textReply("Hello!"), { ...textReply("Deleting your notes now."), stall_after: 0 }, textReply("Sunny, 24°C."));
      const first = await chat(u.key, { message: "hi" });
      const cut = api(u.key, "POST", "/v1/chat", { message: "delete my old notes", session_id: first.sessionId }).then((r) => r.text().catch(() => ""));
      while ((await seen(u.id)).length < 2) await new Promise((r) => setTimeout(r, 20));
      await abortAllDurableObjects();
      await cut.catch(() => undefined);
      // What the crash left: the user's message, no reply.
      expect(roles(await history(u.key, first.sessionId))).toEqual(["user", "assistant", "user"]);

      const next = await chat(u.key, { message: "what's the weather?", session_id: first.sessionId });
      expect(next.text).toBe("Sunny, 24°C.");
      expect(next.events.filter((e) => e.type === "notice")).toEqual([expect.objectContaining({ type: "notice", code: "interrupted" })]);
      expect(shape(next.events).slice(0, 2)).toEqual(["session", "notice"]);

      const sent = (await seen(u.id)).at(-1);
      expect(roles(sent)).toEqual(["user", "assistant", "user", "assistant", "user"]);
      expect(userWords(sent)).toEqual(["hi", "delete my old notes", "what's the weather?"]);
      expect(saidIn(sent?.messages[3] ?? { content: [] })).toMatch(/interrupted/i);
      const h = await history(u.key, first.sessionId);
      expect(roles(h)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);

      // Said once: the turn after that one has nothing to recover.
      await script(u.id, textReply("Bye."));
      const after = await chat(u.key, { message: "bye", session_id: first.sessionId });
      expect(after.events.some((e) => e.type === "notice")).toBe(false);
    },
    T,
  );
});

describe("the daily chat token budget", () => {
  it(
    "is reserved before each model call: a turn of several calls stops before it would pass the budget, and its calls get only what is left",
    async () => {
      const u = await createUser();
      const limit = loadConfig(env).dailyChatTokens;
      // Today's first turn leaves 10,000 tokens of the budget.
      await script(u.id, { reply: { content: [{ type: "text", text: "A long day." }], usage: { input_tokens: limit - 10_000, output_tokens: 0 } } });
      const first = await chat(u.key, { message: "hello" });
      // The next turn calls a tool; its first call spends 9,000 tokens, which leaves no room for a second call.
      await script(
        u.id,
        { reply: { content: [{ type: "tool_use", id: "toolu_b1", name: "current_time", input: {} }], usage: { input_tokens: 3_000, output_tokens: 6_000 } } },
        textReply("never sent"),
      );
      const second = await api(u.key, "POST", "/v1/chat", { message: "what time is it?", session_id: first.sessionId });
      expect(second.status).toBe(200);
      const events = parseSse(await second.text());
      const requests = await seen(u.id);
      // Its only call could not have passed what was left: its output limit was lowered to fit.
      expect(requests).toHaveLength(2);
      expect((requests[1] as SeenRequest & { max_tokens: number }).max_tokens).toBeLessThan(10_000);
      expect(events.at(-1)).toMatchObject({ type: "error", code: "rate_limited", message: expect.stringMatching(/chat budget/) });
      const usage = (await (await api(u.key, "GET", "/v1/usage")).json()) as { chat_budget: { used: number; limit: number } };
      expect(usage.chat_budget.used).toBe(limit - 1_000);
      // The failed turn is taken back like any model failure; its reservation went with its usage row.
      expect(roles(await history(u.key, first.sessionId))).toEqual(["user", "assistant"]);
      const held = await (await userD1(u.id)).prepare("SELECT count(*) n FROM chat_reservations WHERE user_id = ?").bind(u.id).first<{ n: number }>();
      expect(held?.n).toBe(0);
    },
    T,
  );

  it(
    "refuses a turn before anything is written once what is left cannot hold a model call",
    async () => {
      const u = await createUser();
      const limit = loadConfig(env).dailyChatTokens;
      await script(u.id, { reply: { content: [{ type: "text", text: "A long day." }], usage: { input_tokens: limit - 500, output_tokens: 0 } } });
      const first = await chat(u.key, { message: "hello" });
      const res = await api(u.key, "POST", "/v1/chat", { message: "more?", session_id: first.sessionId });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await res.json()).toMatchObject({ error: { code: "rate_limited", message: expect.stringMatching(/500 tokens left/) } });
      expect(await seen(u.id)).toHaveLength(1);
      expect(roles(await history(u.key, first.sessionId))).toEqual(["user", "assistant"]);
    },
    T,
  );
});
