/**
 * Per-plan quotas on stored objects: the cap is counted inside the INSERT, so concurrent writes at the
 * boundary cannot both pass; a refused write is 403 `quota_exceeded` and writes nothing; a bulk import
 * that would cross the cap is refused whole.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import { DEFAULT_QUOTAS } from "../src/config/limits";
import { extractTranscript } from "../src/lessons/extract";
import { extractionModel } from "../src/lessons/queue";
import { ingest } from "../src/lessons/transcripts";
import { consolidateUser } from "../src/memory/consolidate";
import { CONSOLIDATION_FORMAT } from "../src/memory/consolidation-schema";
import { offlineConsolidate } from "../src/memory/offline-consolidate";
import { createModelClient } from "../src/model/anthropic";
import { createSessionWithinBudget } from "../src/sessions/store";
import { fixture } from "./fixtures/transcripts";
import { createUser, readSse, script, textReply } from "./helpers";
import { bytes, capturedDeps, extraction, lesson } from "./lessons-helpers";
import { withEnv } from "./limits-helpers";
import { captured, observe } from "./memory-helpers";
import { userD1, userDb } from "./shard-helpers";

type ErrorJson = { error: { code: string; message: string; request_id: string } };

const SMALL = {
  free: { api_keys: 3, connections: 2, sessions: 1, projects: 2, facts: 5, transcripts: 1, lessons: 2 },
  pro: { api_keys: 5, projects: 4 },
};
const SMALL_QUOTAS = loadConfig({ ...env, PLAN_QUOTAS: JSON.stringify(SMALL) }).quotas;
const call = withEnv({ PLAN_QUOTAS: JSON.stringify(SMALL) });

async function rows(table: string, userId: string, where = ""): Promise<number> {
  // API keys are in the directory; every other table is on the user's shard.
  const d1 = table === "api_keys" ? env.DB : await userD1(userId);
  const row = await d1.prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?1 ${where}`).bind(userId).first<{ n: number }>();
  return row?.n ?? 0;
}

async function expectQuota(res: Response, what: RegExp) {
  expect(res.status).toBe(403);
  const body = (await res.json()) as ErrorJson;
  expect(body.error.code).toBe("quota_exceeded");
  expect(body.error.message).toMatch(what);
  expect(body.error.message).toContain("nothing was written");
}

const statusesOf = (responses: Response[]) => responses.map((r) => r.status).sort();

describe("API keys", () => {
  it("free: up to 3 active keys; the 4th is 403 and stores nothing; revoking one makes room", async () => {
    const u = await createUser();
    expect((await call(u.key, "POST", "/v1/keys", { name: "two" })).status).toBe(201);
    const three = (await (await call(u.key, "POST", "/v1/keys", { name: "three" })).json()) as { id: string };
    await expectQuota(await call(u.key, "POST", "/v1/keys", { name: "four" }), /free plan allows 3 active API keys/);
    expect(await rows("api_keys", u.id)).toBe(3);
    expect((await call(u.key, "DELETE", `/v1/keys/${three.id}`)).status).toBe(200);
    expect((await call(u.key, "POST", "/v1/keys", { name: "four" })).status).toBe(201);
    expect(await rows("api_keys", u.id, "AND revoked_at IS NULL")).toBe(3);
  });

  it("racing issues at the boundary: of 6 concurrent requests with room for 2, exactly 2 succeed", async () => {
    const u = await createUser();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => call(u.key, "POST", "/v1/keys", { name: `k${i}` })));
    expect(statusesOf(results)).toEqual([201, 201, 403, 403, 403, 403]);
    expect(await rows("api_keys", u.id)).toBe(3);
  });

  it("the cap is the plan's: a pro user holds 5", async () => {
    const u = await createUser("pro");
    const results = await Promise.all(Array.from({ length: 6 }, () => call(u.key, "POST", "/v1/keys", {})));
    expect(statusesOf(results)).toEqual([201, 201, 201, 201, 403, 403]);
    expect(await rows("api_keys", u.id)).toBe(5);
  });
});

describe("connections and projects", () => {
  it("connections: of 5 concurrent creates with room for 2, exactly 2 are stored", async () => {
    const u = await createUser();
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => call(u.key, "POST", "/v1/connections", { name: `Tool ${i}` })));
    expect(statusesOf(results)).toEqual([201, 201, 403, 403, 403]);
    expect(await rows("connections", u.id)).toBe(2);
    await expectQuota(await call(u.key, "POST", "/v1/connections", { name: "One more" }), /2 connections/);
  });

  it("projects: free 2 and pro 4 under racing creates; a refused create logs no activity", async () => {
    const free = await createUser();
    const pro = await createUser("pro");
    const create = (key: string, n: number) => Promise.all(Array.from({ length: n }, (_, i) => call(key, "POST", "/v1/projects", { name: `Project ${i}` })));
    expect(statusesOf(await create(free.key, 4))).toEqual([201, 201, 403, 403]);
    expect(statusesOf(await create(pro.key, 6))).toEqual([201, 201, 201, 201, 403, 403]);
    expect([await rows("projects", free.id), await rows("projects", pro.id)]).toEqual([2, 4]);
    expect(await rows("project_activity", free.id)).toBe(2);
  });

  it("undoing a project's deletion or merge is held to the cap: 403 with nothing moved back, undoable again once there is room", async () => {
    const u = await createUser();
    const created = async (name: string) => ((await (await call(u.key, "POST", "/v1/projects", { name })).json()) as { id: string }).id;
    const activity = async (action: string) =>
      ((await (await call(u.key, "GET", "/v1/projects/activity")).json()) as { activity: { id: string; action: string; undoable: boolean }[] }).activity.find(
        (a) => a.action === action,
      );
    const factProject = async () =>
      (await (await userD1(u.id)).prepare("SELECT project_id AS p FROM facts WHERE user_id = ?").bind(u.id).first<{ p: string | null }>())?.p;
    const a = await created("A");
    const b = await created("B");
    expect((await call(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "The A launch is in May", metadata: { project_id: a } }] })).status).toBe(201);
    expect((await call(u.key, "DELETE", `/v1/projects/${a}`)).status).toBe(200);
    const c = await created("C");

    const deleted = await activity("delete");
    await expectQuota(await call(u.key, "POST", `/v1/projects/activity/${deleted?.id}/undo`), /2 projects/);
    expect(await rows("projects", u.id)).toBe(2);
    expect(await factProject()).toBeNull();
    expect((await activity("delete"))?.undoable).toBe(true);

    expect((await call(u.key, "DELETE", `/v1/projects/${c}`)).status).toBe(200);
    expect((await call(u.key, "POST", `/v1/projects/activity/${deleted?.id}/undo`)).status).toBe(200);
    expect(await factProject()).toBe(a);

    // A merge's source comes back the same way.
    expect((await call(u.key, "POST", `/v1/projects/${a}/merge`, { into: b })).status).toBe(200);
    expect(await factProject()).toBe(b);
    await created("D");
    await expectQuota(await call(u.key, "POST", `/v1/projects/activity/${(await activity("merge"))?.id}/undo`), /2 projects/);
    expect(await rows("projects", u.id)).toBe(2);
    expect(await factProject()).toBe(b);
  });
});

describe("sessions", () => {
  it("a chat that would open a session over the quota is 403 before any model call; the existing session still chats", async () => {
    const u = await createUser();
    await script(u.id, textReply("first"), textReply("second"));
    const first = await call(u.key, "POST", "/v1/chat", { message: "hello", stream: true });
    expect(first.status).toBe(200);
    const opened = (await readSse(first)).find((e) => e.type === "session");
    const sessionId = opened?.type === "session" ? opened.id : "";
    await expectQuota(await call(u.key, "POST", "/v1/chat", { message: "a new conversation" }), /1 sessions/);
    expect(await rows("sessions", u.id)).toBe(1);
    const again = await call(u.key, "POST", "/v1/chat", { message: "more", session_id: sessionId, stream: true });
    expect(again.status).toBe(200);
    expect((await readSse(again)).some((e) => e.type === "done")).toBe(true);
  });

  it("racing creations in one statement each: with room for 2, exactly 2 of 6 rows go in", async () => {
    const u = await createUser();
    const db = await userDb(u.id);
    const input = { title: "t", siteId: null, projectId: null };
    const made = await Promise.all(Array.from({ length: 6 }, () => createSessionWithinBudget(db, u.id, input, null, Date.now(), 2)));
    expect(made.filter(Boolean)).toHaveLength(2);
    expect(await rows("sessions", u.id)).toBe(2);
  });
});

describe("facts (bulk import, all or nothing)", () => {
  const facts = (...texts: string[]) => ({ facts: texts.map((text) => ({ text })) });

  it("an import that would cross the quota is refused whole; facts already stored do not count again", async () => {
    const u = await createUser();
    expect((await call(u.key, "POST", "/v1/memory/facts", facts("Lives in Lisbon", "Has a cat named Miso", "Works as a baker"))).status).toBe(201);
    await expectQuota(await call(u.key, "POST", "/v1/memory/facts", facts("Plays the cello", "Speaks Portuguese", "Runs on Sundays")), /5 facts.*import of 3/);
    expect(await rows("facts", u.id)).toBe(3);
    const texts = (await (await userD1(u.id)).prepare("SELECT text FROM facts WHERE user_id = ?1").bind(u.id).all<{ text: string }>()).results.map(
      (r) => r.text,
    );
    expect(texts).not.toContain("Plays the cello");
    // Two new facts and one already stored reach exactly the quota.
    expect((await call(u.key, "POST", "/v1/memory/facts", facts("Plays the cello", "Speaks Portuguese", "Lives in Lisbon"))).status).toBe(201);
    expect(await rows("facts", u.id)).toBe(5);
    // Restating stored facts (a reinforcement) still works at the cap; one more new fact does not.
    expect((await call(u.key, "POST", "/v1/memory/facts", facts("Works as a baker"))).status).toBe(201);
    await expectQuota(await call(u.key, "POST", "/v1/memory/facts", facts("Collects vinyl")), /5 facts/);
    expect(await rows("facts", u.id)).toBe(5);
  });

  it("two imports racing for the last 2 places: one is stored whole, the other not at all", async () => {
    const u = await createUser();
    expect((await call(u.key, "POST", "/v1/memory/facts", facts("Fact one here", "Fact two here", "Fact three here"))).status).toBe(201);
    const [a, b] = await Promise.all([
      call(u.key, "POST", "/v1/memory/facts", facts("Batch A first fact", "Batch A second fact")),
      call(u.key, "POST", "/v1/memory/facts", facts("Batch B first fact", "Batch B second fact")),
    ]);
    expect(statusesOf([a, b])).toEqual([201, 403]);
    const texts = (await (await userD1(u.id)).prepare("SELECT text FROM facts WHERE user_id = ?1").bind(u.id).all<{ text: string }>()).results.map(
      (r) => r.text,
    );
    expect(texts).toHaveLength(5);
    const fromA = texts.filter((t) => t.startsWith("Batch A")).length;
    expect([fromA, 2 - fromA].sort()).toEqual([0, 2]);
  });
});

describe("facts learned in the background", () => {
  const offline = {
    client: createModelClient({ ...loadConfig(env), anthropicApiKey: undefined }, { [CONSOLIDATION_FORMAT]: offlineConsolidate }).client,
    model: "offline",
  };
  const consolidate = async (userId: string) => consolidateUser((await captured(userId, { quotas: SMALL_QUOTAS })).deps, offline, userId);
  const events = async (userId: string) =>
    (
      await (
        await userD1(userId)
      )
        .prepare("SELECT status, error FROM context_events WHERE user_id = ?1 ORDER BY created_at, id")
        .bind(userId)
        .all<{ status: string; error: string | null }>()
    ).results;

  it("a consolidation that would pass the facts quota applies nothing and fails its observations with the reason; with room it applies", async () => {
    const u = await createUser();
    const stored = await call(u.key, "POST", "/v1/memory/facts", {
      facts: [{ text: "Lives in Lisbon" }, { text: "Has a cat named Miso" }, { text: "Works as a baker" }, { text: "Plays the cello" }],
    });
    expect(stored.status).toBe(201);
    const before = await (await userD1(u.id)).prepare("SELECT working_memory FROM users WHERE id = ?1").bind(u.id).first<{ working_memory: string }>();
    await observe(u.id, [{ content: "I speak Portuguese at home" }, { content: "I run along the river on Sundays" }]);

    expect((await consolidate(u.id)).status).toBe("refused");
    expect(await rows("facts", u.id)).toBe(4);
    expect(await rows("memory_runs", u.id)).toBe(0);
    expect(await (await userD1(u.id)).prepare("SELECT working_memory FROM users WHERE id = ?1").bind(u.id).first()).toEqual(before);
    const failed = await events(u.id);
    expect(failed.map((e) => e.status)).toEqual(["failed", "failed"]);
    expect(failed[0]?.error).toMatch(/^quota_exceeded: the free plan allows 5 facts; these observations were not consolidated/);

    // Forgetting one fact makes room for both: the same observations, retried, are learned.
    const { facts } = (await (await call(u.key, "GET", "/v1/memory/facts?limit=10")).json()) as { facts: { id: string }[] };
    expect((await call(u.key, "DELETE", `/v1/memory/facts/${facts[0]?.id}`)).status).toBe(200);
    await (await userD1(u.id)).prepare("UPDATE context_events SET status = 'pending' WHERE user_id = ?1").bind(u.id).run();
    expect((await consolidate(u.id)).status).toBe("applied");
    expect(await rows("facts", u.id)).toBe(5);
    expect((await events(u.id)).map((e) => e.status)).toEqual(["processed", "processed"]);
  });

  it("a user already at the cap is refused before any model call", async () => {
    const u = await createUser();
    const five = ["Lives in Lisbon", "Has a cat named Miso", "Works as a baker", "Plays the cello", "Speaks Portuguese"];
    expect((await call(u.key, "POST", "/v1/memory/facts", { facts: five.map((text) => ({ text })) })).status).toBe(201);
    await observe(u.id, [{ content: "I collect vinyl records" }]);
    expect((await consolidate(u.id)).status).toBe("refused");
    expect(await rows("usage", u.id, "AND kind = 'consolidation'")).toBe(0);
    expect((await events(u.id)).map((e) => e.status)).toEqual(["failed"]);
  });
});

describe("lessons", () => {
  const save = (key: string, title: string) =>
    call(key, "POST", "/v1/lessons", { title, content: `${title}: a rule long enough to be a lesson.`, type: "lesson", signal: "HIGH" });

  it("saving past the lesson quota is 403 with nothing written; restating one still works; unlearning one makes room", async () => {
    const u = await createUser();
    const first = await save(u.key, "Apply migrations before tests");
    expect(first.status).toBe(201);
    expect((await save(u.key, "Pin the wrangler version")).status).toBe(201);
    await expectQuota(await save(u.key, "Mock nothing in the D1 tests"), /2 lessons/);
    expect(await rows("lessons", u.id)).toBe(2);
    const again = await save(u.key, "Apply migrations before tests");
    expect([again.status, ((await again.json()) as { created: boolean }).created]).toEqual([201, false]);
    const { lesson } = (await first.json()) as { lesson: { id: string } };
    expect((await call(u.key, "DELETE", `/v1/lessons/${lesson.id}`)).status).toBe(200);
    expect((await save(u.key, "Mock nothing in the D1 tests")).status).toBe(201);
  });

  it("an extraction whose lessons would pass the quota stores none, and the transcript is failed with the reason and its bytes kept", async () => {
    const u = await createUser();
    expect((await save(u.key, "Apply migrations before tests")).status).toBe(201);
    const f = fixture("fts5-quoting");
    const { deps } = await capturedDeps(u.id);
    const small = { ...deps, config: { ...deps.config, quotas: SMALL_QUOTAS } };
    const { transcript } = await ingest(small, u.id, { sessionId: f.session_id, project: f.project, offset: 0, content: f.text, totalBytes: bytes(f.text) });
    await script(u.id, extraction([lesson({ title: "Quote every FTS5 token" }), lesson({ title: "Escape LIKE wildcards in user search" })]));
    const out = await extractTranscript(small, extractionModel(env), u.id, transcript.id);
    expect(out.status).toBe("refused");
    expect(await rows("lessons", u.id)).toBe(1);
    const t = await (await userD1(u.id)).prepare("SELECT status, error, bytes_synced FROM transcripts WHERE id = ?1").bind(transcript.id).first();
    expect(t).toMatchObject({ status: "failed", bytes_synced: 0 });
    expect(String(t?.error)).toMatch(/^quota_exceeded: the free plan allows 2 lessons .*the 2 lessons of this transcript were not stored/);
    expect(await rows("transcript_segments", u.id)).toBeGreaterThan(0);
  });
});

describe("transcripts", () => {
  const line = `${JSON.stringify({ type: "user", message: { role: "user", content: "hello there" } })}\n`;
  const body = (sessionId: string, offset = 0) => ({
    session_id: sessionId,
    project: "repo",
    offset,
    content: line,
    total_bytes: offset + new TextEncoder().encode(line).length,
  });

  it("a new transcript over the quota is 403 with no row and no segment; the stored one keeps syncing", async () => {
    const u = await createUser();
    const first = await call(u.key, "POST", "/v1/transcripts", body("11111111-1111-4111-8111-111111111111"));
    expect(first.status).toBe(202);
    await expectQuota(await call(u.key, "POST", "/v1/transcripts", body("22222222-2222-4222-8222-222222222222")), /1 synced transcripts/);
    expect([await rows("transcripts", u.id), await rows("transcript_segments", u.id)]).toEqual([1, 1]);
    const more = await call(u.key, "POST", "/v1/transcripts", body("11111111-1111-4111-8111-111111111111", new TextEncoder().encode(line).length));
    expect(more.status).toBe(202);
  });
});

describe("configuration", () => {
  it("PLAN_QUOTAS overrides some numbers and keeps the other defaults; a bad value names the setting", () => {
    const quotas = loadConfig({ ...env, PLAN_QUOTAS: JSON.stringify(SMALL) }).quotas;
    expect(quotas.free).toMatchObject(SMALL.free);
    expect(quotas.pro).toEqual({ ...DEFAULT_QUOTAS.pro, ...SMALL.pro });
    expect(loadConfig({ ...env }).quotas).toEqual(DEFAULT_QUOTAS);
    expect(() => loadConfig({ ...env, PLAN_QUOTAS: "{" })).toThrow(/PLAN_QUOTAS/);
    expect(() => loadConfig({ ...env, PLAN_QUOTAS: '{"free": {"widgets": 3}}' })).toThrow(/PLAN_QUOTAS/);
    expect(() => loadConfig({ ...env, PLAN_QUOTAS: '{"gold": {"facts": 3}}' })).toThrow(/PLAN_QUOTAS/);
    expect(() => loadConfig({ ...env, PLAN_QUOTAS: '{"free": {"facts": -1}}' })).toThrow(/PLAN_QUOTAS/);
  });
});
