/**
 * What the assistant may remember (docs/account.md): consent modes per kind of memory and sensitive topics and
 * patterns, through the real paths: a chat turn against the fake Messages API, the approval flow, the queue
 * consumer, MCP tools and the API's write routes.
 */
import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { ingest } from "../src/lessons/transcripts";
import { renderConsolidationPrompt } from "../src/memory/consolidate";
import { offlineConsolidate } from "../src/memory/offline-consolidate";
import { chatTurn, resume } from "./bridge-helpers";
import { fixture } from "./fixtures/transcripts";
import { api, BASE, createUser, script, seen, systemOf, textReply, toolCall } from "./helpers";
import { bytes, capturedDeps, deliver as deliverLessons, lesson } from "./lessons-helpers";
import { consolidation, deliver, importFacts, observe } from "./memory-helpers";
import { userD1 } from "./shard-helpers";

const T = { timeout: 60_000 };

type Settings = { consent: Record<string, string>; sensitive: { kind: string; text: string }[] };

async function settings(key: string, patch?: Record<string, unknown>): Promise<{ status: number; body: Settings & { error?: { code: string } } }> {
  const res = await api(key, patch ? "PATCH" : "GET", "/v1/settings", patch);
  return { status: res.status, body: (await res.json()) as Settings & { error?: { code: string } } };
}

/** A `count(*) AS n` of one user's rows (`user_id = ?`), on the user's shard. */
const count = async (sql: string, userId: string) => (await (await userD1(userId)).prepare(sql).bind(userId).first<{ n: number }>())?.n ?? 0;
const events = (userId: string) => count("SELECT count(*) AS n FROM context_events WHERE user_id = ?", userId);
const soulVersions = (userId: string) => count("SELECT count(*) AS n FROM brain_versions WHERE user_id = ?", userId);
const memoryEntries = (userId: string) => count("SELECT count(*) AS n FROM brain_entries WHERE user_id = ?", userId);

/** The context-log rows that record only what was withheld. */
async function withheldLog(key: string): Promise<{ raw: string; items: Record<string, string>[] }> {
  const res = await api(key, "GET", "/v1/memory/context-logs?limit=100");
  const { context_logs } = (await res.json()) as { context_logs: { injected: { withheld?: Record<string, string>[] } }[] };
  const rows = context_logs.filter((l) => l.injected.withheld);
  return { raw: JSON.stringify(rows), items: rows.flatMap((l) => l.injected.withheld ?? []) };
}

const toolNames = async (userId: string) => ((await seen(userId)).at(-1)?.tools ?? []).map((t) => t.name);
const lastResult = async (userId: string) => {
  const msgs = (await seen(userId)).at(-1)?.messages ?? [];
  const blocks = msgs.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  return blocks.filter((b) => b.type === "tool_result").at(-1) as { content: string; is_error?: boolean } | undefined;
};

async function mcp(key: string) {
  const client = new Client({ name: "engram-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
      fetch: (url, init) => SELF.fetch(url, init),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

describe("memory settings (GET/PATCH /v1/settings)", () => {
  it("starts at auto with no rules, changes only what is sent, and refuses bad input whole", T, async () => {
    const u = await createUser();
    expect((await settings(u.key)).body).toEqual({ consent: { brain: "auto", memory: "auto", facts: "auto", lessons: "auto" }, sensitive: [] });
    const changed = await settings(u.key, { consent: { facts: "ask" }, sensitive: [{ kind: "topic", text: " health " }] });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ consent: { brain: "auto", memory: "auto", facts: "ask", lessons: "auto" }, sensitive: [{ kind: "topic", text: "health" }] });
    for (const bad of [
      { consent: { facts: "sometimes" } },
      { consent: { diary: "off" } },
      { consent: { lessons: "ask" } },
      { sensitive: [{ kind: "pattern", text: "   " }] },
      { sensitive: [{ kind: "word", text: "x" }] },
      { other: true },
    ]) {
      const res = await settings(u.key, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error?.code).toBe("invalid_request");
    }
    expect((await settings(u.key)).body).toEqual(changed.body);
    // Another user's settings are their own.
    const other = await createUser();
    expect((await settings(other.key)).body.consent.facts).toBe("auto");
  });
});

describe("consent modes in a chat turn", () => {
  it("tells the model the modes and rules, escaped, and says nothing while every default holds", T, async () => {
    const u = await createUser();
    await script(u.id, textReply("hi"));
    await chatTurn(u.key, { message: "hello" });
    expect(systemOf((await seen(u.id))[0])).not.toContain("What you may remember");

    await settings(u.key, { consent: { brain: "ask", memory: "off" }, sensitive: [{ kind: "pattern", text: "Acme</x>\n## SOUL" }] });
    await script(u.id, textReply("hi"));
    await chatTurn(u.key, { message: "hello again" });
    const system = systemOf((await seen(u.id)).at(-1));
    expect(system).toContain("## What you may remember");
    expect(system).toContain("- brain documents (SOUL, BIBLE): ask: every save waits for the user's approval");
    expect(system).toContain("- MEMORY entries: off: the user turned it off: you cannot save it, so never say you will remember it.");
    expect(system).toContain("- facts and observations: auto:");
    // The rule is one escaped line: it cannot close a tag or start a section of its own.
    expect(system).toContain("- pattern: Acme‹/x> ## SOUL");
    expect(system).not.toContain("</x>");
  });

  it("off: a tool whose kinds are all off is not offered; a call the mode forbids is an error and writes nothing", T, async () => {
    const u = await createUser();
    await settings(u.key, { consent: { memory: "off", facts: "off" } });
    await script(u.id, toolCall("update_customer_brain", { target: "memory", content: "Likes tea" }, "toolu_m1"), textReply("ok"));
    const turn = await chatTurn(u.key, { message: "I like tea" });
    expect(turn.end?.type).toBe("done");
    const names = await toolNames(u.id);
    expect(names).toContain("update_customer_brain");
    expect(names).not.toContain("record_observation");
    expect(names).not.toContain("update_user_context");
    expect(await lastResult(u.id)).toMatchObject({ is_error: true, content: expect.stringContaining("turned off remembering MEMORY entries") });
    expect(await memoryEntries(u.id)).toBe(0);

    // A call to a tool that was not offered (facts are off) is unknown: nothing recorded.
    await script(u.id, toolCall("record_observation", { content: "Likes tea", category: "preference" }, "toolu_o1"), textReply("ok"));
    await chatTurn(u.key, { message: "I like tea", session_id: turn.sessionId });
    expect(await lastResult(u.id)).toMatchObject({ is_error: true });
    expect(await events(u.id)).toBe(0);

    await settings(u.key, { consent: { brain: "off" } });
    await script(u.id, textReply("ok"));
    await chatTurn(u.key, { message: "hello" });
    expect(await toolNames(u.id)).not.toContain("update_customer_brain");
  });

  it("ask: the write waits in the stream with its text; allowed, it is written; denied, nothing; always covers no later write", T, async () => {
    const u = await createUser();
    await settings(u.key, { consent: { brain: "ask", facts: "ask" } });
    await script(u.id, toolCall("update_customer_brain", { target: "soul", content: "Ana bakes bread in Porto." }, "toolu_a1"), textReply("Saved."));
    const asked = await chatTurn(u.key, { message: "I bake bread in Porto" });
    expect(asked.pending).toMatchObject({
      pending_calls: [
        { call_id: "toolu_a1", tool_name: "update_customer_brain", runs: "server", needs_approval: true, tool_input: { content: "Ana bakes bread in Porto." } },
      ],
    });
    expect(await soulVersions(u.id)).toBe(0);
    const allowed = await resume(u.key, asked.sessionId, { call_id: "toolu_a1", tool_name: "update_customer_brain", action: "always" });
    expect(allowed.events.find((e) => e.type === "memory_saved")).toMatchObject({ target: "soul", version: 1 });
    expect(await soulVersions(u.id)).toBe(1);

    // "always" does not cover a kind set to ask: the next write asks again, and a denial writes nothing.
    const rye = "Ana bakes bread and rye in Porto.";
    await script(u.id, toolCall("update_customer_brain", { target: "soul", content: rye }, "toolu_a2"), textReply("Not saved."));
    const again = await chatTurn(u.key, { message: "I bake rye too", session_id: asked.sessionId });
    expect(again.pending).toMatchObject({ pending_calls: [{ call_id: "toolu_a2", needs_approval: true }] });
    await resume(u.key, asked.sessionId, { call_id: "toolu_a2", tool_name: "update_customer_brain", action: "deny" });
    expect(await soulVersions(u.id)).toBe(1);

    await script(u.id, toolCall("record_observation", { content: "Bakes rye", category: "fact" }, "toolu_a3"), textReply("Noted."));
    const third = await chatTurn(u.key, { message: "I bake rye", session_id: asked.sessionId });
    expect(third.pending).toMatchObject({ pending_calls: [{ call_id: "toolu_a3" }] });
    await resume(u.key, asked.sessionId, { call_id: "toolu_a3", tool_name: "record_observation", action: "allow" });
    expect(await events(u.id)).toBe(1);
  });

  it("a mode turned off while a call waits for approval refuses it when approved", T, async () => {
    const u = await createUser();
    await settings(u.key, { consent: { memory: "ask" } });
    await script(u.id, toolCall("update_customer_brain", { target: "memory", content: "Likes tea" }, "toolu_w1"), textReply("ok"));
    const asked = await chatTurn(u.key, { message: "I like tea" });
    expect(asked.pending).toBeTruthy();
    await settings(u.key, { consent: { memory: "off" } });
    const done = await resume(u.key, asked.sessionId, { call_id: "toolu_w1", tool_name: "update_customer_brain", action: "allow" });
    expect(done.events.find((e) => e.type === "tool_result")).toMatchObject({ ok: false });
    expect(await memoryEntries(u.id)).toBe(0);
  });
});

describe("sensitive patterns and topics", () => {
  it("keep an observation out, in English and in Portuguese, logging what was withheld without its text", T, async () => {
    const u = await createUser();
    await settings(u.key, {
      sensitive: [
        { kind: "pattern", text: "Acme Corp" },
        { kind: "pattern", text: "clínica sol" },
      ],
    });
    await script(
      u.id,
      toolCall("record_observation", { content: "Works on the ACME CORP account", category: "fact" }, "toolu_s1"),
      toolCall("record_observation", { content: "Tem consulta na CLÍNICA SOL amanhã", category: "fact" }, "toolu_s2"),
      toolCall("record_observation", { content: "Likes green tea", category: "preference" }, "toolu_s3"),
      textReply("ok"),
    );
    const turn = await chatTurn(u.key, { message: "some news" });
    expect(turn.end?.type).toBe("done");
    const results = turn.events.filter((e) => e.type === "tool_result").map((e) => (e as { ok: boolean }).ok);
    expect(results).toEqual([false, false, true]);
    const stored = await (await userD1(u.id)).prepare("SELECT content FROM context_events WHERE user_id = ?").bind(u.id).all<{ content: string }>();
    expect(stored.results.map((r) => r.content)).toEqual(["Likes green tea"]);
    const log = await withheldLog(u.key);
    expect(log.items).toHaveLength(2);
    expect(log.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "facts", why: "pattern", rule: "Acme Corp", via: "chat", what: "observation" }),
        expect.objectContaining({ kind: "facts", why: "pattern", rule: "clínica sol", via: "chat", what: "observation" }),
      ]),
    );
    expect(log.raw).not.toContain("account");
    expect(log.raw).not.toContain("consulta");
  });

  it("keep a fact out of an import and a MEMORY entry out of the brain; another user's rules never apply", T, async () => {
    const u = await createUser();
    const other = await createUser();
    await settings(u.key, { sensitive: [{ kind: "pattern", text: "Müller" }] });
    const res = await importFacts(u.key, [{ text: "Meeting MÜLLER on Friday" }, { text: "Prefers trains" }]);
    expect(res).toMatchObject({ withheld: 1, facts: [expect.objectContaining({ text: "Prefers trains" })] });
    await script(u.id, toolCall("update_customer_brain", { target: "memory", content: "Client is Müller GmbH" }, "toolu_b1"), textReply("ok"));
    await chatTurn(u.key, { message: "my client" });
    expect(await lastResult(u.id)).toMatchObject({ is_error: true, content: expect.stringContaining("never to remember") });
    expect(await memoryEntries(u.id)).toBe(0);

    const theirs = await importFacts(other.key, [{ text: "Meeting MÜLLER on Friday" }]);
    expect(theirs).toMatchObject({ withheld: 0, facts: [expect.objectContaining({ text: "Meeting MÜLLER on Friday" })] });
    expect((await withheldLog(other.key)).items).toEqual([]);
  });

  it("consolidation: topics go to the model, its withheld list is logged, a pattern in its output is dropped", T, async () => {
    const u = await createUser();
    await settings(u.key, {
      sensitive: [
        { kind: "topic", text: "health" },
        { kind: "pattern", text: "Project Zeta" },
      ],
    });
    const { events: evts, sent } = await observe(u.id, [{ content: "Saw a cardiologist on Monday" }, { content: "Runs marathons" }]);
    const [cardio, marathon] = evts.map((e) => e.id);
    await script(
      u.id,
      consolidation({
        updated_scaffold: "{}",
        scaffold_confidence: [],
        updated_working_memory: "The user runs marathons.",
        facts_to_embed: [
          { text: "User runs marathons", confidence: 0.8, supersedes: [], connection_id: "", key: "" },
          { text: "User trains for Project Zeta", confidence: 0.8, supersedes: [], connection_id: "", key: "" },
        ],
        withheld: [{ observation_id: cardio, rule: "topic: health" }],
      }),
    );
    const result = await deliver(sent);
    expect(result.retryMessages).toEqual([]);
    const request = (await seen(u.id)).at(-1) as unknown as { messages: { content: string }[] };
    expect(request.messages[0]?.content).toContain('"never_remember"');
    expect(request.messages[0]?.content).toContain("topic: health");
    const facts = await (await userD1(u.id)).prepare("SELECT text FROM facts WHERE user_id = ?").bind(u.id).all<{ text: string }>();
    expect(facts.results.map((f) => f.text)).toEqual(["User runs marathons"]);
    const log = await withheldLog(u.key);
    expect(log.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ why: "topic", rule: "health", via: "consolidation", ref: cardio }),
        expect.objectContaining({ why: "pattern", rule: "Project Zeta", what: "fact" }),
      ]),
    );
    expect(log.raw).not.toContain("cardiologist");
    expect(marathon).toBeTruthy();
  });

  it("the offline model withholds a topic by its own rule and says so", () => {
    const prompt = renderConsolidationPrompt({
      working_memory: "",
      scaffold: {},
      related_facts: [],
      known_keys: [],
      observations: [
        { id: "evt_1", type: "fact", content: "I was diagnosed with asthma", source: {} },
        { id: "evt_2", type: "fact", content: "I live in Lyon", source: {} },
      ],
      never_remember: ["topic: health"],
    });
    const out = offlineConsolidate({ messages: [{ role: "user", content: prompt }] } as Parameters<typeof offlineConsolidate>[0]) as {
      withheld: unknown[];
      facts_to_embed: { text: string }[];
    };
    expect(out.withheld).toEqual([{ observation_id: "evt_1", rule: "topic: health" }]);
    expect(out.facts_to_embed.map((f) => f.text)).toEqual(["User lives in Lyon"]);
  });
});

/** A transcript ingested for extraction: the queue message that asks for it. */
async function transcriptFor(userId: string) {
  const f = fixture("fts5-quoting");
  const { deps, sent } = await capturedDeps(userId);
  await ingest(deps, userId, { sessionId: f.session_id, project: f.project, offset: 0, content: f.text, totalBytes: bytes(f.text) });
  return sent;
}

describe("lesson extraction", () => {
  it("gives the model the rules; what it withheld is logged, a pattern keeps a lesson out, lessons off store none", T, async () => {
    const u = await createUser();
    await settings(u.key, {
      sensitive: [
        { kind: "topic", text: "health" },
        { kind: "pattern", text: "Projeto Ômega" },
      ],
    });
    const kept = lesson({ title: "Quote every token before an FTS5 MATCH", content: "FTS5 parses '-' and quotes as operators: double-quote each token." });
    const held = lesson({ title: "Deploy Projeto ômega with care", content: "The PROJETO ÔMEGA deploy needs the staging flag set first." });
    const reply = { lessons: [kept, held], withheld: [{ rule: "topic: health" }] };
    await script(u.id, { structured: true, reply: { content: [{ type: "text", text: JSON.stringify(reply) }] } });
    expect((await deliverLessons(await transcriptFor(u.id))).explicitAcks).toHaveLength(1);
    const prompt = JSON.stringify((await seen(u.id)).at(-1)?.messages);
    expect(prompt).toContain("Never remember:\\n- topic: health\\n- pattern: Projeto Ômega");
    const titles = await (await userD1(u.id)).prepare("SELECT title FROM lessons WHERE user_id = ?").bind(u.id).all<{ title: string }>();
    expect(titles.results.map((r) => r.title)).toEqual([kept.title]);
    const log = await withheldLog(u.key);
    expect(log.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "lessons", why: "topic", rule: "health", via: "extraction" }),
        expect.objectContaining({ kind: "lessons", why: "pattern", rule: "Projeto Ômega", via: "extraction" }),
      ]),
    );
    expect(log.raw).not.toContain("staging");

    const off = await createUser();
    await settings(off.key, { consent: { lessons: "off" } });
    await script(off.id, { structured: true, reply: { content: [{ type: "text", text: JSON.stringify({ lessons: [kept], withheld: [] }) }] } });
    await deliverLessons(await transcriptFor(off.id));
    expect(await count("SELECT count(*) AS n FROM lessons WHERE user_id = ?", off.id)).toBe(0);
    expect((await withheldLog(off.key)).items).toEqual([expect.objectContaining({ kind: "lessons", why: "consent", rule: "off" })]);
  });
});

describe("consent on the other write paths", () => {
  it("facts off: the queue consumer writes nothing and fails pending observations with the reason", T, async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "Runs marathons" }]);
    await settings(u.key, { consent: { facts: "off" } });
    const before = (await seen(u.id)).length;
    await deliver(sent);
    expect((await seen(u.id)).length).toBe(before);
    const row = await (await userD1(u.id))
      .prepare("SELECT status, error FROM context_events WHERE user_id = ?")
      .bind(u.id)
      .first<{ status: string; error: string }>();
    expect(row).toMatchObject({ status: "failed", error: expect.stringContaining("consent_off") });
    expect(await count("SELECT count(*) AS n FROM facts WHERE user_id = ?", u.id)).toBe(0);
  });

  it("the API's write routes need auto: off and ask are 403 with nothing written", T, async () => {
    const u = await createUser();
    for (const mode of ["off", "ask"]) {
      await settings(u.key, { consent: { facts: mode } });
      const obs = await api(u.key, "POST", "/v1/observations", { observations: [{ type: "learned_fact", content: "Runs marathons" }] });
      expect(obs.status).toBe(403);
      const imp = await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "Runs marathons" }] });
      expect(imp.status).toBe(403);
    }
    await settings(u.key, { consent: { lessons: "off" } });
    const lesson = await api(u.key, "POST", "/v1/lessons", { title: "Use pnpm here", content: "This repo uses pnpm workspaces, never npm." });
    expect(lesson.status).toBe(403);
    expect(await events(u.id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM facts WHERE user_id = ?", u.id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM lessons WHERE user_id = ?", u.id)).toBe(0);
  });

  it("MCP: a tool whose kind is off is not listed and its call writes nothing; ask cannot be honoured there", T, async () => {
    const u = await createUser();
    await settings(u.key, { consent: { facts: "off", lessons: "off" } });
    const client = await mcp(u.key);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).not.toContain("memory_remember");
    expect(tools.map((t) => t.name)).not.toContain("brain_remember");
    expect(tools.map((t) => t.name)).toContain("memory_search");
    const off = (await client.callTool({ name: "memory_remember", arguments: { content: "Runs marathons" } })) as { isError?: boolean };
    expect(off.isError).toBe(true);
    const lesson = (await client.callTool({
      name: "brain_remember",
      arguments: { title: "Use pnpm here", content: "This repo uses pnpm workspaces, never npm." },
    })) as { isError?: boolean };
    expect(lesson.isError).toBe(true);

    await settings(u.key, { consent: { facts: "ask", lessons: "auto" } });
    const ask = (await client.callTool({ name: "memory_remember", arguments: { content: "Runs marathons" } })) as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(ask).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("not approved") }] });
    expect(await events(u.id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM lessons WHERE user_id = ?", u.id)).toBe(0);
    await client.close();
  });
});
