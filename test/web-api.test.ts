/** The API the web app's first screen and sessions list rely on: the overview, renaming, context logs with their text. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import { composeRegistry } from "../src/core/capability";
import { api, BASE, chat, createUser, script, textReply } from "./helpers";
import { registry } from "./worker";

type Overview = {
  counts: Record<string, number>;
  recent: { kind: string; title: string }[];
  sections: string[];
  unavailable: string[];
  today: { calls: number };
};

describe("GET /v1/overview", () => {
  it("counts what the caller has, across capabilities, and nothing of another user's", async () => {
    const a = await createUser();
    const b = await createUser();
    const empty = (await (await api(a.key, "GET", "/v1/overview")).json()) as Overview;
    expect(empty.counts).toMatchObject({ sessions: 0, facts: 0, memory_entries: 0, brain_documents: 0, pending_proposals: 0 });
    expect(empty.sections).toEqual(expect.arrayContaining(["brain", "memory"]));
    expect(empty.unavailable).toEqual([]);

    await api(a.key, "POST", "/v1/brain/memory", { content: "Prefers green tea" });
    await api(a.key, "PUT", "/v1/brain/soul", { content: "Be brief." });
    await script(a.id, textReply("Hello"));
    await chat(a.key, { message: "hi" });
    await api(b.key, "POST", "/v1/brain/memory", { content: "B's secret" });

    const res = await api(a.key, "GET", "/v1/overview");
    expect(res.status).toBe(200);
    const o = (await res.json()) as Overview;
    expect(o.counts).toMatchObject({ sessions: 1, memory_entries: 1, brain_documents: 1 });
    expect(o.recent.map((r) => r.kind)).toEqual(expect.arrayContaining(["session", "memory_entry"]));
    expect(o.recent.some((r) => r.title.includes("B's secret"))).toBe(false);
    expect(o.today.calls).toBeGreaterThanOrEqual(1);
  });

  it("needs a key", async () => {
    expect((await api(null, "GET", "/v1/overview")).status).toBe(401);
  });

  it("serves the other sections when one capability's section fails", async () => {
    const broken = composeRegistry([
      ...registry.capabilities,
      {
        name: "broken",
        overview: async () => {
          throw new Error("down");
        },
      },
    ]);
    const user = await createUser();
    const res = await createApp(broken).request(`${BASE}/v1/overview`, { headers: { authorization: `Bearer ${user.key}` } }, env);
    expect(res.status).toBe(200);
    const o = (await res.json()) as Overview;
    expect(o.unavailable).toEqual(["broken"]);
    expect(o.sections).toEqual(expect.arrayContaining(["brain", "memory"]));
  });
});

describe("PATCH /v1/sessions/{id}", () => {
  it("renames the caller's session", async () => {
    const user = await createUser();
    await script(user.id, textReply("Hello"));
    const { sessionId } = await chat(user.key, { message: "hi" });
    const res = await api(user.key, "PATCH", `/v1/sessions/${sessionId}`, { title: "Tea plans" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { session: { title: string } }).session.title).toBe("Tea plans");
    const list = (await (await api(user.key, "GET", "/v1/sessions")).json()) as { sessions: { title: string }[] };
    expect(list.sessions[0]?.title).toBe("Tea plans");
  });

  it("rejects a blank or oversize title and unknown fields, changing nothing", async () => {
    const user = await createUser();
    await script(user.id, textReply("Hello"));
    const { sessionId } = await chat(user.key, { message: "hi" });
    for (const body of [{ title: "   " }, { title: "x".repeat(81) }, { title: "ok", pinned: true }, {}]) {
      const res = await api(user.key, "PATCH", `/v1/sessions/${sessionId}`, body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    }
    const list = (await (await api(user.key, "GET", "/v1/sessions")).json()) as { sessions: { title: string }[] };
    expect(list.sessions[0]?.title).toBe("hi");
  });

  it("answers 404 for another user's session and leaves it as it was", async () => {
    const owner = await createUser();
    const other = await createUser();
    await script(owner.id, textReply("Hello"));
    const { sessionId } = await chat(owner.key, { message: "mine" });
    const res = await api(other.key, "PATCH", `/v1/sessions/${sessionId}`, { title: "stolen" });
    expect(res.status).toBe(404);
    const list = (await (await api(owner.key, "GET", "/v1/sessions")).json()) as { sessions: { title: string }[] };
    expect(list.sessions[0]?.title).toBe("mine");
  });
});

describe("context logs", () => {
  it("keep the exact text the turn injected", async () => {
    const user = await createUser();
    await api(user.key, "PUT", "/v1/brain/soul", { content: "Always answer in haiku." });
    await script(user.id, textReply("Hello"));
    const { sessionId } = await chat(user.key, { message: "hi" });
    const res = await api(user.key, "GET", `/v1/memory/context-logs?session_id=${sessionId}`);
    const { context_logs } = (await res.json()) as { context_logs: { injected: { system: string; turn_context: string } }[] };
    expect(context_logs[0]?.injected.system).toContain("Always answer in haiku.");
    expect(context_logs[0]?.injected.turn_context).toContain("turn_context");
  });
});
