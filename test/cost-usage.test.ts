import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import { estimateCost, MODELS } from "../src/config/models";
import { recordUsage } from "../src/usage/record";
import { api, chat, createUser, newSession, script, seen, turnWithEnv } from "./helpers";
import { userDb } from "./shard-helpers";

const T = 60_000;
type Totals = { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_creation_tokens: number; cost_usd: number; calls: number };
type UsageBody = {
  totals: Totals;
  by_kind: (Totals & { kind: string })[];
  by_model: (Totals & { model: string | null })[];
  chat_budget: { limit: number | null; used: number; remaining: number | null };
};

describe("usage and cost", () => {
  it("prices uncached input, cache writes, cache reads and output from the model catalogue; an unknown model costs 0", () => {
    const sonnet = "claude-sonnet-5-5";
    const p = MODELS[sonnet].prices;
    expect(estimateCost(sonnet, { input_tokens: 1_000_000, output_tokens: 0 })).toBe(p.input);
    expect(
      estimateCost(sonnet, { input_tokens: 0, output_tokens: 1_000_000, cache_read_input_tokens: 1_000_000, cache_creation_input_tokens: 1_000_000 }),
    ).toBe(p.output + p.cacheRead + p.cacheWrite);
    // Haiku's long-prompt tier: above 100,000 prompt tokens every token pays the higher price.
    const haiku = MODELS["claude-haiku-5-5"];
    expect(estimateCost(haiku.id, { input_tokens: 200_000, output_tokens: 0 })).toBe(0.2 * haiku.longPrompt.prices.input);
    expect(estimateCost("claude-unknown-9", { input_tokens: 1000, output_tokens: 1000 })).toBe(0);
    const override = { "claude-unknown-9": { input: 1, output: 1, cacheWrite: 1, cacheRead: 1 } };
    expect(estimateCost("claude-unknown-9", { input_tokens: 1_000_000, output_tokens: 0 }, override)).toBe(1);
  });

  it("charges cache reads at each model's listed price (USD per million tokens, from the model pages)", () => {
    const read = (model: string) => estimateCost(model, { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 1_000_000 });
    expect(read("claude-sonnet-5-5")).toBe(0.1);
    expect(read("claude-opus-5-5")).toBe(0.2);
    // Haiku 5.5: a million-token prompt is in its long-prompt tier ($0.05); up to 100,000 tokens it is $0.01.
    expect(read("claude-haiku-5-5")).toBe(0.05);
    expect(estimateCost("claude-haiku-5-5", { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 100_000 })).toBe(0.001);
    // Fable 5.1 cut cache reads to a quarter of Fable 5's $1.00 (0.025x input, not the usual 0.1x).
    expect(read("claude-fable-5-1")).toBe(0.25);
    expect(estimateCost("claude-fable-5-1", { input_tokens: 1_000_000, output_tokens: 1_000_000, cache_creation_input_tokens: 1_000_000 })).toBe(
      10 + 50 + 12.5,
    );
  });

  it("prices Fable 5.2 at its own list price, a fifth below Fable 5.1 (not at 0 as an unknown model)", () => {
    const million = (field: "input_tokens" | "output_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens") =>
      estimateCost("claude-fable-5-2", { input_tokens: 0, output_tokens: 0, [field]: 1_000_000 });
    expect(million("input_tokens")).toBe(8);
    expect(million("output_tokens")).toBe(40);
    expect(million("cache_creation_input_tokens")).toBe(10);
    expect(million("cache_read_input_tokens")).toBe(0.2);
    // A typical cached chat call: 2,000 new input tokens, 40,000 read back, 1,000 written, 800 out.
    const call = { input_tokens: 2000, output_tokens: 800, cache_read_input_tokens: 40_000, cache_creation_input_tokens: 1000 };
    expect(estimateCost("claude-fable-5-2", call)).toBe(0.066);
    expect(estimateCost("claude-fable-5-2", call)).toBeCloseTo(0.8 * estimateCost("claude-fable-5-1", call), 9);
  });

  it("reads MODEL_PRICES into the catalogue's price shape", () => {
    const config = loadConfig({ ...env, MODEL_PRICES: JSON.stringify({ "claude-sonnet-5-5": { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 } }) });
    expect(config.modelPrices["claude-sonnet-5-5"]).toEqual({ input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 });
    expect(estimateCost("claude-sonnet-5-5", { input_tokens: 1_000_000, output_tokens: 0 }, config.modelPrices)).toBe(3);
  });

  it(
    "keeps cache read and cache creation tokens on usage rows, with the estimated cost",
    async () => {
      const u = await createUser();
      const db = await userDb(u.id);
      await recordUsage(db, {
        userId: u.id,
        kind: "chat",
        model: "claude-haiku-5-5",
        usage: { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 5000, cache_creation_input_tokens: 2000 },
      });
      const body = (await (await api(u.key, "GET", "/v1/usage")).json()) as UsageBody;
      expect(body.totals).toMatchObject({ input_tokens: 100, output_tokens: 10, cache_read_tokens: 5000, cache_creation_tokens: 2000, calls: 1 });
      expect(body.totals.cost_usd).toBeCloseTo((100 * 0.1 + 10 * 0.5 + 5000 * 0.01 + 2000 * 0.125) / 1e6, 9);
    },
    T,
  );

  it(
    "records a turn's completed model calls even when a later call fails, per session and per user; others see none of it",
    async () => {
      const [u, other] = [await createUser(), await createUser()];
      const call = { type: "tool_use" as const, id: "toolu_cost1", name: "current_time", input: {} };
      await script(u.id, { reply: { content: [call], usage: { input_tokens: 1000, output_tokens: 50 } } }, { status: 400, message: "bad" });
      const turn = await chat(u.key, { message: "what time is it?" });
      expect(turn.events.at(-1)).toMatchObject({ type: "error", code: "model_error" });

      const session = (await (await api(u.key, "GET", `/v1/sessions/${turn.sessionId}/usage`)).json()) as {
        totals: Totals;
        turns: { kind: string; model: string; input_tokens: number; cost_usd: number }[];
      };
      expect(session.turns).toEqual([expect.objectContaining({ kind: "chat", model: env.CHAT_MODEL, input_tokens: 1000, output_tokens: 50 })]);
      expect(session.totals.cost_usd).toBeCloseTo(estimateCost(env.CHAT_MODEL ?? null, { input_tokens: 1000, output_tokens: 50 }), 9);
      expect(session.totals.cost_usd).toBeGreaterThan(0);

      const mine = (await (await api(u.key, "GET", "/v1/usage?days=1")).json()) as UsageBody;
      expect(mine.by_kind.find((k) => k.kind === "chat")).toMatchObject({ input_tokens: 1000, output_tokens: 50 });
      expect(mine.chat_budget.used).toBe(1050);

      const theirs = (await (await api(other.key, "GET", "/v1/usage")).json()) as UsageBody;
      expect(theirs.totals.calls).toBe(0);
      const res = await api(other.key, "GET", `/v1/sessions/${turn.sessionId}/usage`);
      expect(res.status).toBe(404);
    },
    T,
  );

  it(
    "prices each model call of a turn on its own: two Haiku 5.5 calls of 60,000 prompt tokens pay the base price, not the long-prompt price",
    async () => {
      const u = await createUser();
      const call = { type: "tool_use" as const, id: "toolu_tier1", name: "current_time", input: {} };
      await script(
        u.id,
        { reply: { content: [call], usage: { input_tokens: 60_000, output_tokens: 10 } } },
        { reply: { content: [{ type: "text", text: "It is noon." }], usage: { input_tokens: 60_000, output_tokens: 10 } } },
      );
      // CHAT_MODEL is an operator's setting, not something a request can choose.
      const sessionId = await newSession(u.id);
      await turnWithEnv({ CHAT_MODEL: "claude-haiku-5-5" }, { userId: u.id, sessionId, message: "what time is it?" });

      const session = (await (await api(u.key, "GET", `/v1/sessions/${sessionId}/usage`)).json()) as {
        totals: Totals;
        turns: { kind: string; model: string; input_tokens: number; output_tokens: number }[];
      };
      expect(session.turns).toEqual([expect.objectContaining({ kind: "chat", model: "claude-haiku-5-5", input_tokens: 120_000, output_tokens: 20 })]);
      // Each request's prompt is 60,000 tokens, under the 100,000-token tier: $0.10 in, $0.50 out per million.
      expect(session.totals.cost_usd).toBeCloseTo((2 * (60_000 * 0.1 + 10 * 0.5)) / 1e6, 9);
    },
    T,
  );

  it(
    "runs a tool turn on Fable 5.2 as Fable 5.1's rules require and prices it at Fable 5.2's list price",
    async () => {
      const u = await createUser();
      const usage = { input_tokens: 1000, output_tokens: 20 };
      await script(
        u.id,
        {
          reply: {
            content: [
              { type: "thinking", thinking: "Checking the clock." },
              { type: "tool_use", id: "toolu_f52", name: "current_time", input: {} },
            ],
            usage,
          },
        },
        { reply: { content: [{ type: "text", text: "It is noon." }], usage } },
      );
      const sessionId = await newSession(u.id);
      const events = await turnWithEnv({ CHAT_MODEL: "claude-fable-5-2" }, { userId: u.id, sessionId, message: "what time is it?" });
      expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
      const requests = await seen(u.id);
      expect(requests).toHaveLength(2);
      for (const r of requests) {
        expect(r).toMatchObject({ model: "claude-fable-5-2", thinking: { type: "adaptive", display: "summarized" } });
        expect(r.tool_choice).toBeUndefined();
      }
      // The thinking block went back unchanged within the tool turn (the fake checks its signature).
      expect(JSON.stringify(requests[1]?.messages)).toContain('"type":"thinking"');

      const session = (await (await api(u.key, "GET", `/v1/sessions/${sessionId}/usage`)).json()) as { totals: Totals };
      expect(session.totals.cost_usd).toBeCloseTo((2 * (1000 * 8 + 20 * 40)) / 1e6, 9);
    },
    T,
  );

  it(
    "answers 429 with Retry-After and the error shape once today's chat tokens are used up, and writes nothing",
    async () => {
      const u = await createUser();
      const limit = loadConfig(env).dailyChatTokens;
      await script(u.id, { reply: { content: [{ type: "text", text: "that was long" }], usage: { input_tokens: limit, output_tokens: 1 } } });
      const first = await chat(u.key, { message: "hello" });
      for (const body of [{ message: "again" }, { message: "again", session_id: first.sessionId }]) {
        const res = await api(u.key, "POST", "/v1/chat", body);
        expect(res.status).toBe(429);
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(86_400);
        const err = (await res.json()) as { error: { code: string; message: string; request_id: string } };
        expect(err.error.code).toBe("rate_limited");
        expect(err.error.message).toMatch(/chat budget/);
        expect(err.error.request_id).toBeTruthy();
      }
      const sessions = (await (await api(u.key, "GET", "/v1/sessions")).json()) as { sessions: unknown[] };
      expect(sessions.sessions).toHaveLength(1);
      const usage = (await (await api(u.key, "GET", "/v1/usage")).json()) as UsageBody;
      expect(usage.chat_budget.remaining).toBe(0);
    },
    T,
  );

  it(
    "rejects bad input with the error shape",
    async () => {
      const u = await createUser();
      const res = await api(u.key, "GET", "/v1/usage?days=0");
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
      expect((await api(null, "GET", "/v1/usage")).status).toBe(401);
    },
    T,
  );
});
