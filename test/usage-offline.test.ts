// The offline model's calls are usage like any other, but nothing was billed: they are recorded as "offline", at
// no cost, whatever CHAT_MODEL names (the Usage page shows them so).
import { describe, expect, it } from "vitest";
import { OFFLINE_MODEL } from "../src/usage/record";
import { api, createUser, newSession, turnWithEnv } from "./helpers";

type Row = { model: string | null; cost_usd: number; calls: number };

describe("usage of the offline model", () => {
  it("records an offline chat turn as the offline model at no cost, not as Claude", async () => {
    const u = await createUser();
    const sessionId = await newSession(u.id);
    await turnWithEnv({ ANTHROPIC_API_KEY: "", CHAT_MODEL: "claude-sonnet-5-5" }, { userId: u.id, sessionId, message: "Hello there" });
    const res = await api(u.key, "GET", "/v1/usage?days=1");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { totals: Row; by_model: Row[] };
    // The local embedder's row is there too (recall embeds the message); no row names the Claude model.
    expect(body.by_model.map((m) => m.model)).not.toContain("claude-sonnet-5-5");
    expect(body.by_model.find((m) => m.model === OFFLINE_MODEL)?.calls).toBeGreaterThan(0);
    expect(body.totals.cost_usd).toBe(0);
  }, 60_000);
});
