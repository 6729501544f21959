/**
 * Request rate limits on the Workers rate limiting bindings, as miniflare runs them: per API key, per user
 * (all keys together), per client address on admin routes; chat turns and imports charged by cost.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import { charge, requestCost } from "../src/http/rate-limit";
import { api, createUser } from "./helpers";
import { type Call, inOneWindow, smallLimits, withEnv } from "./limits-helpers";

type ErrorJson = { error: { code: string; message: string; request_id: string } };

async function expectLimited(res: Response, who: string) {
  expect(res.status).toBe(429);
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  const body = (await res.json()) as ErrorJson;
  expect(body.error.code).toBe("rate_limited");
  expect(body.error.message).toContain(who);
  expect(body.error.request_id).toBeTruthy();
}

async function statuses(call: Call, key: string, n: number, path = "/v1/keys"): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(key, "GET", path)).status);
  return out;
}

async function countFacts(key: string): Promise<number> {
  const res = await api(key, "GET", "/v1/memory/facts?limit=200");
  return ((await res.json()) as { facts: unknown[] }).facts.length;
}

describe("rate limits per key and per user", () => {
  it("the key's 7th request in the window is 429 with Retry-After and the error shape; another user is unaffected", async () => {
    await inOneWindow(async () => {
      const call = withEnv(smallLimits());
      const a = await createUser();
      const b = await createUser();
      expect(await statuses(call, a.key, 6)).toEqual([200, 200, 200, 200, 200, 200]);
      await expectLimited(await call(a.key, "GET", "/v1/keys"), "API key");
      expect(await statuses(call, b.key, 6)).toEqual([200, 200, 200, 200, 200, 200]);
      // The limit applies to what was configured for the binding, not to anything the client sends.
      await expectLimited(await call(a.key, "GET", "/v1/sessions", undefined, { "x-forwarded-for": "10.9.9.9" }), "API key");
    });
  });

  it("a user's other key has its own key budget but shares the user's (10 in the window)", async () => {
    await inOneWindow(async () => {
      const call = withEnv(smallLimits());
      const u = await createUser();
      const second = (await (await api(u.key, "POST", "/v1/keys", { name: "second" })).json()) as { key: string };
      expect(await statuses(call, u.key, 6)).toEqual([200, 200, 200, 200, 200, 200]);
      await expectLimited(await call(u.key, "GET", "/v1/keys"), "API key");
      // 7 charged to the user so far: the second key gets 3 more, then the user's limit answers.
      expect(await statuses(call, second.key, 3)).toEqual([200, 200, 200]);
      await expectLimited(await call(second.key, "GET", "/v1/keys"), "user");
    });
  });

  it("a bulk import is charged RATE_COST_IMPORT requests; a refused import writes nothing", async () => {
    await inOneWindow(async () => {
      const call = withEnv({ ...smallLimits(), RATE_COST_IMPORT: "4" });
      const u = await createUser();
      const facts = (n: number) => ({ facts: Array.from({ length: n }, (_, i) => ({ text: `Rate limited import fact number ${i}` })) });
      expect((await call(u.key, "POST", "/v1/memory/facts", facts(2))).status).toBe(201);
      // 4 of 6 spent: a second import (4 more) is refused, a plain read (1) still fits.
      await expectLimited(await call(u.key, "POST", "/v1/memory/facts", facts(3)), "API key");
      expect(await countFacts(u.key)).toBe(2);
    });
  });

  it("a chat turn is charged RATE_COST_TURN requests, even one refused as bad input", async () => {
    await inOneWindow(async () => {
      const call = withEnv({ ...smallLimits(), RATE_COST_TURN: "5" });
      const u = await createUser();
      expect((await call(u.key, "POST", "/v1/chat", { message: "" })).status).toBe(400);
      expect(await statuses(call, u.key, 1)).toEqual([200]);
      await expectLimited(await call(u.key, "GET", "/v1/keys"), "API key");
    });
  });

  it("the costs come from configuration: plain requests 1, turns and imports by RATE_COST_*", () => {
    const costs = loadConfig({ ...env, RATE_COST_TURN: "7", RATE_COST_IMPORT: "3" }).requestCosts;
    expect(requestCost("POST", "/v1/chat", costs)).toBe(7);
    expect(requestCost("POST", "/v1/chat/ui", costs)).toBe(7);
    expect(requestCost("GET", "/v1/chat/ui/c1/stream", costs)).toBe(1);
    expect(requestCost("POST", "/v1/sessions/ses_1/tool_result", costs)).toBe(7);
    expect(requestCost("POST", "/v1/transcripts", costs)).toBe(3);
    expect(requestCost("POST", "/v1/observations", costs)).toBe(3);
    expect(requestCost("GET", "/v1/memory/facts", costs)).toBe(1);
    expect(requestCost("POST", "/v1/keys", costs)).toBe(1);
    expect(loadConfig({ ...env }).requestCosts).toEqual({ turn: 5, import: 10 });
    expect(() => loadConfig({ ...env, RATE_COST_TURN: "0" })).toThrow(/RATE_COST_TURN/);
  });

  it("a deployment without a limiter binding limits nothing; RATE_LIMITS=off turns every limit off", async () => {
    expect(await charge(undefined, "key:x", 50)).toBe(true);
    const off = withEnv({ ...smallLimits(), RATE_LIMITS: "off" });
    const u = await createUser();
    expect(await statuses(off, u.key, 12)).toEqual(Array(12).fill(200));
    expect(() => loadConfig({ ...env, RATE_LIMITS: "maybe" })).toThrow(/RATE_LIMITS/);
  });
});

describe("rate limits on admin routes (minting users and keys)", () => {
  it("per client address, before the token is checked: the 4th call is 429 and creates no user; another address is unaffected", async () => {
    await inOneWindow(async () => {
      const call = withEnv(smallLimits());
      const ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
      const from = { "cf-connecting-ip": ip };
      const token = env.ADMIN_TOKEN ?? "";
      expect((await call("wrong-token-0123456789", "GET", "/v1/admin/users", undefined, from)).status).toBe(401);
      expect((await call(token, "POST", "/v1/admin/users", { name: "Limited One" }, from)).status).toBe(201);
      expect((await call(token, "GET", "/v1/admin/users", undefined, from)).status).toBe(200);
      const before = await env.DB.prepare("SELECT count(*) AS n FROM users").first<{ n: number }>();
      await expectLimited(await call(token, "POST", "/v1/admin/users", { name: "Limited Two" }, from), "client address");
      const after = await env.DB.prepare("SELECT count(*) AS n FROM users").first<{ n: number }>();
      expect(after?.n).toBe(before?.n);
      expect((await call(token, "GET", "/v1/admin/users", undefined, { "cf-connecting-ip": "203.0.113.7" })).status).toBe(200);
    });
  });
});
