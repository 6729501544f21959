import { describe, expect, it } from "vitest";
import { api, chat, createUser, promptOf, recalledIn, script, seen, textReply, toolCall } from "./helpers";
import { consolidateMessage, consolidation, deliver, getJson, importFacts } from "./memory-helpers";
import { userD1 } from "./shard-helpers";

type Log = { id: string; session_id: string; injected: { sections: { name: string; ids: string[] }[]; skipped: { name: string; reason: string }[] } };
type Events = { events: { id: string; event_type: string; content: string; status: string; source_metadata: Record<string, unknown> }[] };

const lastSystem = async (userId: string) => promptOf((await seen(userId)).at(-1));
const lastLog = async (key: string) => (await getJson<{ context_logs: Log[] }>(key, "/v1/memory/context-logs")).context_logs[0];

describe("end to end: tool call -> event -> queue -> consolidation -> injected next turn", () => {
  it("learns from the conversation in the background and grounds the next turn in it", async () => {
    const u = await createUser();
    await script(
      u.id,
      toolCall("record_observation", { content: "User prefers short emails and is launching Toolstream", category: "preference" }, "toolu_obs"),
      textReply("Got it."),
    );
    const first = await chat(u.key, { message: "Keep my emails short please, I'm busy launching Toolstream." });
    expect(first.events.find((e) => e.type === "tool_use")).toMatchObject({ name: "record_observation", reason: "Remembering a preference" });
    expect(first.events.map((e) => e.type)).toEqual(expect.arrayContaining(["memory_saved", "tool_result", "done"]));
    const { events } = await getJson<Events>(u.key, "/v1/memory/events");
    expect(events).toMatchObject([{ event_type: "preference", status: "pending", source_metadata: { source: "interactive", session_id: first.sessionId } }]);

    await script(
      u.id,
      consolidation({
        updated_scaffold: { Projects: { Toolstream: "launching" }, Preferences: { email: "short" } },
        updated_working_memory: "The user is busy launching Toolstream this week.",
        facts_to_embed: ["User prefers short emails"],
      }),
    );
    // Drive the consumer now rather than wait for the queue's own delivery (which then finds nothing left to do).
    await deliver([
      consolidateMessage(
        u.id,
        events.map((e) => e.id),
      ),
    ]);
    expect((await getJson<Events>(u.key, "/v1/memory/events")).events[0]?.status).toBe("processed");

    await script(u.id, textReply("Short version: done."));
    await chat(u.key, { message: "How should you write my emails?" });
    const system = await lastSystem(u.id);
    const order = ["## Your Context (working memory)\nThe user is busy launching Toolstream this week.", "## Structured Data", '"Toolstream":"launching"'];
    const at = order.map((s) => system.indexOf(s));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);

    const log = await lastLog(u.key);
    const facts = await getJson<{ facts: { id: string }[] }>(u.key, "/v1/memory/facts");
    // The fact is recalled as a search result the model can cite.
    expect(recalledIn((await seen(u.id)).at(-1))).toEqual([`User prefers short emails (engram:fact:${facts.facts[0]?.id})`]);
    expect(log?.injected.sections.map((s) => s.name)).toEqual(expect.arrayContaining(["working_memory", "scaffold", "retrieved_facts"]));
    expect(log?.injected.sections.find((s) => s.name === "retrieved_facts")?.ids).toEqual([facts.facts[0]?.id]);
    expect(log?.injected.sections.find((s) => s.name === "scaffold")?.ids).toEqual(expect.arrayContaining(["Projects", "Preferences"]));
    // Injected facts count as recalled (they rank up from now on).
    expect((await (await userD1(u.id)).prepare("SELECT recall_count AS n FROM facts WHERE user_id = ?").bind(u.id).first<{ n: number }>())?.n).toBe(1);
  });

  it("seeds retrieval of a short follow-up with the previous reply", async () => {
    const u = await createUser();
    await importFacts(u.key, [{ text: "The Lisbon office has a rooftop garden" }]);
    await script(u.id, textReply("Our Lisbon office is the newest one."), textReply("Yes."));
    const first = await chat(u.key, { message: "Which office is the newest?" });
    await chat(u.key, { message: "and there?", session_id: first.sessionId });
    expect(recalledIn((await seen(u.id)).at(-1))).toEqual([expect.stringMatching(/^The Lisbon office has a rooftop garden \(engram:fact:/)]);
  });

  it("cold start: a new user's turn works with every memory tier empty", async () => {
    const u = await createUser();
    await script(u.id, textReply("Hello!"));
    const { text } = await chat(u.key, { message: "hi there" });
    expect(text).toBe("Hello!");
    const system = await lastSystem(u.id);
    expect(system).not.toContain("working memory");
    expect(recalledIn((await seen(u.id)).at(-1))).toEqual([]);
    const log = await lastLog(u.key);
    expect(log?.injected.skipped.filter((s) => ["working_memory", "scaffold", "learned_info", "retrieved_facts"].includes(s.name))).toEqual([]);
  });

  it("another user's context logs are not visible", async () => {
    const a = await createUser();
    const b = await createUser();
    await chat(a.key, { message: "hello" });
    expect((await getJson<{ context_logs: Log[] }>(b.key, "/v1/memory/context-logs")).context_logs).toEqual([]);
    expect((await getJson<{ context_logs: Log[] }>(a.key, "/v1/memory/context-logs")).context_logs).toHaveLength(1);
  });
});

describe("memory tools", () => {
  it("update_user_context turns scaffold updates and learned facts into autonomous events", async () => {
    const u = await createUser();
    await script(
      u.id,
      toolCall("update_user_context", { scaffold_updates: { Role: "CTO", Team: { size: 12 } }, persistent_info_additions: ["Uses Linear for planning"] }),
      textReply("ok"),
    );
    await chat(u.key, { message: "inbox run" });
    const { events } = await getJson<Events>(u.key, "/v1/memory/events");
    expect(events.map((e) => [e.event_type, e.content, e.source_metadata.source]).sort()).toEqual([
      ["learned_fact", "Uses Linear for planning", "autonomous"],
      ["scaffold_update", '{"Role":"CTO"}', "autonomous"],
      ["scaffold_update", '{"Team":{"size":12}}', "autonomous"],
    ]);
  });

  it("records nothing a turn learns once its session is gone: an erase or a delete that lands while the turn runs", async () => {
    const u = await createUser();
    const conn = (await (await api(u.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    const calls = [
      { type: "tool_use" as const, id: "toolu_gone", name: "record_observation", input: { content: "User lives in Lisbon", category: "fact" } },
      { type: "tool_use" as const, id: "toolu_gone2", name: "update_connection_context", input: { connection_id: conn.id, learned_info: { board: "OPS" } } },
    ];
    await script(u.id, { reply: { content: calls }, delay_ms: 1_000 }, textReply("Noted."));
    const turn = chat(u.key, { message: "I live in Lisbon; my Jira board is OPS" });
    while ((await seen(u.id)).length < 1) await new Promise((r) => setTimeout(r, 20));
    // What an erase does to a session whose object it leaves to the sweep: the row goes at once, the turn runs on.
    await (await userD1(u.id)).prepare("DELETE FROM sessions WHERE user_id = ?").bind(u.id).run();
    const { events } = await turn;
    expect(events.filter((e) => e.type === "tool_result")).toEqual([
      { type: "tool_result", id: "toolu_gone", name: "record_observation", ok: false },
      { type: "tool_result", id: "toolu_gone2", name: "update_connection_context", ok: false },
    ]);
    expect((await getJson<Events>(u.key, "/v1/memory/events")).events).toEqual([]);
    expect(((await getJson<{ learned_info: unknown }>(u.key, `/v1/connections/${conn.id}`)) as { learned_info: unknown }).learned_info).toEqual({});
  });

  it("rejects a tool call with bad input as an is_error result, recording nothing", async () => {
    const u = await createUser();
    await script(u.id, toolCall("record_observation", { content: "x", category: "gossip" }), toolCall("update_user_context", {}), textReply("ok"));
    const { events } = await chat(u.key, { message: "go" });
    expect(events.filter((e) => e.type === "tool_result").map((e) => e.type === "tool_result" && e.ok)).toEqual([false, false]);
    expect((await getJson<Events>(u.key, "/v1/memory/events")).events).toEqual([]);
  });

  it("caps observations per turn", async () => {
    const u = await createUser();
    const calls = Array.from({ length: 11 }, (_, i) => ({
      type: "tool_use" as const,
      id: `toolu_c${i}`,
      name: "record_observation",
      input: { content: `fact ${i}`, category: "fact" },
    }));
    await script(u.id, { reply: { content: calls } }, textReply("ok"));
    const { events } = await chat(u.key, { message: "go" });
    expect(events.filter((e) => e.type === "tool_result" && !e.ok)).toHaveLength(1);
    expect((await getJson<Events>(u.key, "/v1/memory/events")).events).toHaveLength(10);
  });

  it("update_connection_context saves per-connection learned info, injected while the connection is active", async () => {
    const u = await createUser();
    const other = await createUser();
    const conn = (await (await api(u.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    const foreign = (await (await api(other.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    await script(
      u.id,
      toolCall("update_connection_context", { connection_id: conn.id, learned_info: { default_project: "PROJ" } }),
      toolCall("update_connection_context", { connection_id: foreign.id, learned_info: { default_project: "EVIL" } }),
      textReply("saved"),
      textReply("next"),
    );
    const { events } = await chat(u.key, { message: "use PROJ by default in Jira" });
    expect(events.filter((e) => e.type === "tool_result").map((e) => e.type === "tool_result" && e.ok)).toEqual([true, false]);
    expect(events.find((e) => e.type === "memory_saved")).toMatchObject({ target: "connection", entry_id: conn.id });
    expect(await getJson(other.key, `/v1/connections/${foreign.id}`)).toMatchObject({ learned_info: {} });
    expect(await getJson(u.key, `/v1/connections/${conn.id}`)).toMatchObject({ learned_info: { default_project: "PROJ" } });
    await chat(u.key, { message: "create a ticket" });
    expect(await lastSystem(u.id)).toContain(`## Learned Info\n{"connections":{"Jira (${conn.id})":{"default_project":"PROJ"}}}`);

    await api(u.key, "PATCH", `/v1/connections/${conn.id}`, { active: false });
    await script(u.id, textReply("ok"));
    await chat(u.key, { message: "again" });
    expect(await lastSystem(u.id)).not.toContain("Learned Info");
  });

  it("learned info is cleaned like the scaffold, from the model or the API: secrets redacted, invisible characters gone", async () => {
    const u = await createUser();
    const conn = (await (await api(u.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    await script(
      u.id,
      toolCall("update_connection_context", {
        connection_id: conn.id,
        learned_info: { api_token: "abcd1234efgh5678", "board\u200b": "OPS\u202e", notes: "login with password=hunter2butlonger" },
      }),
      textReply("saved"),
      textReply("next"),
    );
    await chat(u.key, { message: "my jira token is abcd1234efgh5678, board OPS" });
    const learned = { api_token: "[REDACTED]", board: "OPS", notes: "login with password=[REDACTED]" };
    expect((await getJson<{ learned_info: unknown }>(u.key, `/v1/connections/${conn.id}`)).learned_info).toEqual(learned);
    // Neither the next prompt nor the audit event keeps the secrets.
    await chat(u.key, { message: "create a ticket" });
    expect(await lastSystem(u.id)).toContain(`"Jira (${conn.id})":${JSON.stringify(learned)}`);
    const audit = (await getJson<Events>(u.key, "/v1/memory/events")).events.filter((e) => e.event_type === "connection_context");
    expect(audit).toHaveLength(1);
    expect(audit[0]?.content).not.toMatch(/abcd1234efgh5678|hunter2butlonger|[\u200b\u202e]/);

    const created = await api(u.key, "POST", "/v1/connections", { name: "GitHub", learned_info: { "org\u200b": "acme", jira_secret: "k3y-v4lu3" } });
    const other = (await created.json()) as { id: string; learned_info: Record<string, unknown> };
    expect(other.learned_info).toEqual({ org: "acme", jira_secret: "[REDACTED]" });
    const patched = await api(u.key, "PATCH", `/v1/connections/${other.id}`, {
      learned_info: { org: "acme\u202e", GITHUB_TOKEN: "ghp_abcdefghijklmnopqrstuvwxyz" },
    });
    expect(await patched.json()).toMatchObject({ learned_info: { org: "acme", GITHUB_TOKEN: "[REDACTED]" } });
  });
});

describe("connections API", () => {
  it("creates, lists, reads, updates and deletes, scoped to the owner", async () => {
    const u = await createUser();
    const other = await createUser();
    const created = await api(u.key, "POST", "/v1/connections", { name: "GitHub", learned_info: { org: "acme" } });
    expect(created.status).toBe(201);
    const conn = (await created.json()) as { id: string; active: boolean };
    expect(conn.active).toBe(true);
    expect((await getJson<{ connections: unknown[] }>(u.key, "/v1/connections")).connections).toHaveLength(1);
    expect((await getJson<{ connections: unknown[] }>(other.key, "/v1/connections")).connections).toEqual([]);
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { name: "x" }],
      ["DELETE", undefined],
    ] as const) {
      expect((await api(other.key, method, `/v1/connections/${conn.id}`, body)).status).toBe(404);
    }
    expect((await api(u.key, "POST", "/v1/connections", { name: "" })).status).toBe(400);
    expect((await api(u.key, "POST", "/v1/connections", { name: "x", learned_info: { blob: "y".repeat(3000) } })).status).toBe(413);
    expect((await api(u.key, "PATCH", `/v1/connections/${conn.id}`, { active: "no" })).status).toBe(400);
    const renamed = await api(u.key, "PATCH", `/v1/connections/${conn.id}`, { name: "GitHub Enterprise" });
    expect(await renamed.json()).toMatchObject({ name: "GitHub Enterprise", learned_info: { org: "acme" } });
    await importFacts(u.key, [{ text: "Main repo is acme/api", metadata: { connection_id: conn.id } }]);
    expect(await (await api(u.key, "DELETE", `/v1/connections/${conn.id}`)).json()).toEqual({ ok: true, facts_deleted: 1 });
    expect((await api(u.key, "GET", `/v1/connections/${conn.id}`)).status).toBe(404);
  });
});

describe("POST /v1/observations", () => {
  it("accepts a batch, is idempotent under Idempotency-Key, and refuses a reused key with another body", async () => {
    const u = await createUser();
    const body = {
      observations: [
        { type: "scaffold_update", content: '{"Role": "CTO"}', source_metadata: { source: "inbox", session_id: "cycle-1" } },
        { type: "learned_fact", content: "User reads email at 7am" },
      ],
    };
    const first = await api(u.key, "POST", "/v1/observations", body, { "idempotency-key": "cycle-1" });
    expect(first.status).toBe(202);
    const a = (await first.json()) as { events: { id: string; status: string; source_metadata: Record<string, unknown> }[]; replayed: boolean };
    expect(a.replayed).toBe(false);
    expect(a.events.map((e) => e.status)).toEqual(["pending", "pending"]);
    expect(a.events[0]?.source_metadata).toEqual({ source: "inbox", session_id: "cycle-1" });
    const again = (await (await api(u.key, "POST", "/v1/observations", body, { "idempotency-key": "cycle-1" })).json()) as typeof a;
    expect(again.replayed).toBe(true);
    expect(again.events.map((e) => e.id)).toEqual(a.events.map((e) => e.id));
    const reused = await api(
      u.key,
      "POST",
      "/v1/observations",
      { observations: [{ type: "learned_fact", content: "different" }] },
      { "idempotency-key": "cycle-1" },
    );
    expect(reused.status).toBe(409);
    expect(((await reused.json()) as { error: { code: string } }).error.code).toBe("conflict");
    // Keys are per user.
    const other = await createUser();
    expect(((await (await api(other.key, "POST", "/v1/observations", body, { "idempotency-key": "cycle-1" })).json()) as typeof a).replayed).toBe(false);
    expect((await getJson<Events>(u.key, "/v1/memory/events?limit=10")).events).toHaveLength(2);
  });

  it("rejects bad input and another user's connection or project, writing nothing", async () => {
    const u = await createUser();
    const other = await createUser();
    const foreign = (await (await api(other.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    const theirs = (await (await api(other.key, "POST", "/v1/projects", { name: "Theirs" })).json()) as { id: string };
    for (const project_id of [theirs.id, "prj_nothere"]) {
      const filed = await api(u.key, "POST", "/v1/observations", {
        observations: [{ type: "learned_fact", content: "User's cat is called Miso", source_metadata: { project_id } }],
      });
      expect(filed.status).toBe(404);
    }
    const bad = [
      { observations: [] },
      { observations: [{ type: "fact", content: "interactive types are for the tool" }] },
      { observations: [{ type: "learned_fact", content: "" }] },
      { observations: [{ type: "learned_fact", content: "x", user_id: "someone" }] },
    ];
    for (const body of bad) expect((await api(u.key, "POST", "/v1/observations", body)).status).toBe(400);
    const res = await api(u.key, "POST", "/v1/observations", {
      observations: [{ type: "learned_fact", content: "x", source_metadata: { connection_id: foreign.id } }],
    });
    expect(res.status).toBe(404);
    expect((await api(null, "POST", "/v1/observations", bad[1])).status).toBe(401);
    expect((await getJson<Events>(u.key, "/v1/memory/events")).events).toEqual([]);
  });
});

describe("an observation's session_id", () => {
  it("is the caller's own label: another user's session id reaches nothing of that session or its owner", async () => {
    const a = await createUser();
    const b = await createUser();
    await script(b.id, textReply("Hi B."));
    const theirs = await chat(b.key, { message: "hello" });
    const labelled = await api(a.key, "POST", "/v1/observations", {
      observations: [{ type: "learned_fact", content: "User plays the oboe", source_metadata: { source: "importer", session_id: theirs.sessionId } }],
    });
    expect(labelled.status).toBe(202);
    // A keeps the label with A's own event; B's memory, context logs and conversation show nothing of it.
    expect((await getJson<Events>(a.key, "/v1/memory/events")).events.map((e) => e.source_metadata.session_id)).toEqual([theirs.sessionId]);
    expect((await getJson<Events>(b.key, "/v1/memory/events")).events).toEqual([]);
    const logs = await getJson<{ logs: unknown[] }>(b.key, `/v1/memory/context-logs?session_id=${theirs.sessionId}`);
    expect(JSON.stringify(logs)).not.toContain("oboe");
    expect(JSON.stringify(await getJson(b.key, `/v1/sessions/${theirs.sessionId}`))).not.toContain("oboe");
    // B deleting the session takes nothing of A's with it.
    expect((await api(b.key, "DELETE", `/v1/sessions/${theirs.sessionId}`)).status).toBe(200);
    expect((await getJson<Events>(a.key, "/v1/memory/events")).events).toHaveLength(1);
  });
});

describe("API description", () => {
  it("documents every memory endpoint in /openapi.json", async () => {
    const doc = (await (await api(null, "GET", "/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
    const paths = [
      "/v1/observations",
      "/v1/memory/working",
      "/v1/memory/scaffold",
      "/v1/memory/facts",
      "/v1/memory/facts/search",
      "/v1/memory/facts/{id}",
      "/v1/memory/events",
      "/v1/memory/events/retry",
      "/v1/memory/context-logs",
      "/v1/memory/runs",
      "/v1/memory/runs/{rev}",
      "/v1/memory/runs/{rev}/restore",
      "/v1/memory/runs/copies",
      "/v1/memory",
      "/v1/connections",
      "/v1/connections/{id}",
    ];
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(paths));
    expect(Object.keys(doc.paths["/v1/memory/facts/{id}"] ?? {}).sort()).toEqual(["delete", "get", "patch"]);
    expect(Object.keys(doc.paths["/v1/memory/runs/{rev}"] ?? {})).toEqual(["get"]);
    expect(Object.keys(doc.paths["/v1/memory/runs/{rev}/restore"] ?? {})).toEqual(["post"]);
    expect(Object.keys(doc.paths["/v1/memory/runs/copies"] ?? {})).toEqual(["delete"]);
  });
});
