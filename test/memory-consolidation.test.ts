import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runScheduled } from "../src/core/cron";
import type { QueueMessage } from "../src/core/queue";
import { consolidateUser } from "../src/memory/consolidate";
import { consolidateMessages, consolidationModel } from "../src/memory/queue";
import { STALE_PENDING_MS, sweepMemory } from "../src/memory/sweep";
import { api, createUser, promptOf, script, seen, textReply } from "./helpers";
import { captured, consolidateMessage, consolidation, deliver, getJson, importFacts, observe, slowModel } from "./memory-helpers";
import { countOnShards, userD1 } from "./shard-helpers";
import { registry } from "./worker";

type Events = { events: { id: string; status: string; attempts: number; error: string | null }[]; budget: { exhausted: boolean } };
type Working = { working_memory: string; words: number; pending_events: number };
type Scaffold = { scaffold: Record<string, unknown>; confidence: Record<string, { confidence: number; updated_at: number }> };
type Facts = { facts: { id: string; text: string; confidence: number; source: string; metadata: Record<string, unknown> }[] };

const count = countOnShards;

const OUTPUT = {
  updated_scaffold: { Role: "Engineering manager", Projects: '{"toolstream": {"status": "beta", "tags": "[\\"ai\\", \\"infra\\"]"}}' },
  scaffold_confidence: { Role: 0.95 },
  updated_working_memory: "Ana is preparing the Toolstream beta launch and prefers short emails.",
  facts_to_embed: ["User prefers short emails", { text: "Toolstream is in beta", confidence: 0.8 }],
};

/** An answer no schema allows (a list, not an object): the consolidation fails and the message is retried. */
const unusable = consolidation(["not an object"]);

describe("consolidation (queue consumer)", () => {
  it("consolidates a user's pending events with one model call and applies scaffold, working memory and facts", async () => {
    const u = await createUser();
    const { events, sent } = await observe(u.id, [
      { type: "preference", content: "I prefer short emails", sourceMetadata: { source: "interactive", session_id: "ses_1" } },
      { type: "project_details", content: "Toolstream is in beta" },
    ]);
    expect(sent).toEqual([
      consolidateMessage(
        u.id,
        events.map((e) => e.id),
      ),
    ]);
    await script(u.id, consolidation(OUTPUT));
    const result = await deliver(sent);
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);

    const request = (await seen(u.id))[0] as unknown as {
      metadata: { user_id: string };
      tool_choice?: unknown;
      output_config: { format: { type: string; schema: { title: string } } };
      messages: { content: string }[];
      model: string;
    };
    expect(request.metadata.user_id).toBe(u.id);
    expect(request.tool_choice).toBeUndefined();
    expect(request.output_config.format).toMatchObject({ type: "json_schema", schema: { title: "consolidation" } });
    expect(request.model).toBe(env.BACKGROUND_MODEL);
    expect(request.messages[0]?.content).toContain("I prefer short emails");

    const working = await getJson<Working>(u.key, "/v1/memory/working");
    expect(working).toMatchObject({ working_memory: OUTPUT.updated_working_memory, pending_events: 0 });
    const scaffold = await getJson<Scaffold>(u.key, "/v1/memory/scaffold");
    // Stringified nested JSON is unwrapped, recursively.
    expect(scaffold.scaffold).toEqual({ Role: "Engineering manager", Projects: { toolstream: { status: "beta", tags: ["ai", "infra"] } } });
    expect(scaffold.confidence.Role?.confidence).toBe(0.95);
    expect(scaffold.confidence.Projects?.confidence).toBe(0.7);
    const facts = await getJson<Facts>(u.key, "/v1/memory/facts");
    expect(facts.facts.map((f) => f.text).sort()).toEqual(["Toolstream is in beta", "User prefers short emails"]);
    expect(facts.facts.find((f) => f.text === "Toolstream is in beta")?.confidence).toBe(0.8);
    expect(facts.facts[0]).toMatchObject({ source: "system_learned", metadata: { event_ids: events.map((e) => e.id), session_ids: ["ses_1"] } });
    const listed = await getJson<Events>(u.key, "/v1/memory/events");
    expect(listed.events.map((e) => e.status)).toEqual(["processed", "processed"]);
    expect(await count("SELECT count(*) n FROM usage WHERE user_id = ? AND kind = 'consolidation'", u.id)).toBe(1);
    const runs = await getJson<{ runs: { rev: number; event_ids: string[] }[] }>(u.key, "/v1/memory/runs");
    expect(runs.runs).toMatchObject([{ rev: 1, event_ids: events.map((e) => e.id) }]);
  });

  it("applies any answer the wire schema allows in one call: the schema's bare instance (an empty profile string) is not retried", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ type: "fact", content: "I live in Porto" }]);
    // Nothing scripted: the fake answers with the smallest instance of the schema it was sent.
    const result = await deliver(sent);
    expect(result.retryMessages).toEqual([]);
    expect(result.explicitAcks).toHaveLength(1);
    expect(await seen(u.id)).toHaveLength(1);
    expect((await getJson<Events>(u.key, "/v1/memory/events")).events.map((e) => e.status)).toEqual(["processed"]);
  });

  it("caps working memory at 500 words and merges the scaffold (null removes a key)", async () => {
    const u = await createUser();
    const first = await observe(u.id, [{ content: "a" }]);
    await script(u.id, consolidation({ updated_scaffold: { A: 1, B: { x: 1 } }, updated_working_memory: "w ".repeat(800), facts_to_embed: [] }));
    await deliver(first.sent);
    expect((await getJson<Working>(u.key, "/v1/memory/working")).words).toBe(500);
    const second = await observe(u.id, [{ content: "b" }]);
    await script(u.id, consolidation({ updated_scaffold: { A: null, B: { y: 2 } }, updated_working_memory: "short", facts_to_embed: [] }));
    await deliver(second.sent);
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ B: { x: 1, y: 2 } });
  });

  it("cleans the profile and the narrative the model writes as it cleans the user's own edit: secrets redacted, invisible characters gone", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "My wifi password is hunter2butlonger; I cook for a living" }]);
    await script(
      u.id,
      consolidation({
        updated_scaffold: { wifi_password: "hunter2butlonger", "Role\u200b": "Chef\u202e", Home: { router: "api_key=abcd1234efgh5678" } },
        scaffold_confidence: { "Role\u200b": 0.95 },
        updated_working_memory: "Cooks for a living.\u0007 Shared api_key=abcd1234efgh5678 for the router.",
        facts_to_embed: [],
      }),
    );
    await deliver(sent);
    const scaffold = await getJson<Scaffold>(u.key, "/v1/memory/scaffold");
    expect(scaffold.scaffold).toEqual({ wifi_password: "[REDACTED]", Role: "Chef", Home: { router: "api_key=[REDACTED]" } });
    expect(scaffold.confidence.Role?.confidence).toBe(0.95);
    expect((await getJson<Working>(u.key, "/v1/memory/working")).working_memory).toBe("Cooks for a living. Shared api_key=[REDACTED] for the router.");
    // The next turn's prompt carries none of it either.
    await script(u.id, textReply("Hello"));
    expect((await api(u.key, "POST", "/v1/chat", { message: "hi", stream: false })).status).toBe(200);
    const prompt = JSON.stringify((await seen(u.id)).at(-1));
    expect(prompt).not.toContain("hunter2butlonger");
    expect(prompt).not.toContain("abcd1234efgh5678");
  });

  it("keeps no profile key the user could not remove by name: none with nothing visible in it, none over 100 characters", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "I cook for a living" }]);
    const long = "K".repeat(150);
    await script(
      u.id,
      consolidation({
        updated_scaffold: { "\u200b": "x", [long]: "long", Role: "Chef", Home: { "\u200b": 1, city: "Lyon" } },
        updated_working_memory: "",
        facts_to_embed: [],
      }),
    );
    await deliver(sent);
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ Role: "Chef", Home: { city: "Lyon" } });
    // Every key it kept, the user can remove.
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { Role: null, Home: null } })).status).toBe(200);
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({});
  });

  it("accepts the whole tool input stringified, and facts_to_embed as a JSON string", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "x" }]);
    await script(u.id, consolidation({ updated_scaffold: '{"Role": "Chef"}', updated_working_memory: "{not json", facts_to_embed: '["User cooks ramen"]' }));
    const result = await deliver(sent);
    expect(result.retryMessages).toEqual([]);
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ Role: "Chef" });
    // The narrative is never JSON-unwrapped.
    expect((await getJson<Working>(u.key, "/v1/memory/working")).working_memory).toBe("{not json");
    expect((await getJson<Facts>(u.key, "/v1/memory/facts")).facts.map((f) => f.text)).toEqual(["User cooks ramen"]);
  });

  it("stores a fact whose text reads like JSON as that text, and the rest of the batch with it, instead of failing the batch", async () => {
    const u = await createUser();
    const { events, sent } = await observe(u.id, [{ content: '{"favourite_editor": "vim"}' }, { content: "Works at Toolstream" }]);
    await script(
      u.id,
      consolidation({
        updated_scaffold: {},
        updated_working_memory: "Works at Toolstream.",
        facts_to_embed: ['{"favourite_editor": "vim"}', { text: "[1, 2, 3]", confidence: 0.8 }, '{"text": "User works at Toolstream", "confidence": 0.9}'],
      }),
    );
    const result = await deliver(sent);
    expect(result.retryMessages).toEqual([]);
    const facts = await getJson<Facts>(u.key, "/v1/memory/facts");
    expect(facts.facts.map((f) => f.text).sort()).toEqual(["User works at Toolstream", "[1, 2, 3]", '{"favourite_editor": "vim"}']);
    // A stringified fact object is still read as one (its confidence kept).
    expect(facts.facts.find((f) => f.text === "User works at Toolstream")?.confidence).toBe(0.9);
    const listed = await getJson<Events>(u.key, "/v1/memory/events");
    expect(listed.events.map((e) => [e.id, e.status]).sort()).toEqual(events.map((e) => [e.id, "processed"]).sort());
  });

  const malformed: [string, Parameters<typeof script>[1]][] = [
    ["a reply that is not JSON", { ...textReply("I think the user likes tea"), structured: true }],
    ["a refusal", { structured: true, reply: { content: [{ type: "text", text: "" }], stop_reason: "refusal" } }],
    ["a wrong type", consolidation({ updated_scaffold: {}, updated_working_memory: 42 })],
    ["a missing field", consolidation({ updated_working_memory: "x" })],
    ["unparseable stringified JSON", consolidation({ updated_scaffold: '{"Role": ', updated_working_memory: "x" })],
  ];
  for (const [name, step] of malformed) {
    it(`retries with backoff on ${name}, recording the error and changing nothing`, async () => {
      const u = await createUser();
      const { events, sent } = await observe(u.id, [{ content: "I like tea" }]);
      await script(u.id, step, step);
      expect((await deliver(sent, 1)).retryMessages).toHaveLength(1);
      expect((await deliver(sent, 3)).retryMessages).toHaveLength(1);
      const listed = await getJson<Events>(u.key, "/v1/memory/events");
      expect(listed.events).toMatchObject([{ id: events[0]?.id, status: "pending", attempts: 2 }]);
      expect(listed.events[0]?.error).toMatch(/MalformedOutput/);
      expect((await getJson<Working>(u.key, "/v1/memory/working")).working_memory).toBe("");
      expect(await count("SELECT count(*) n FROM facts WHERE user_id = ?", u.id)).toBe(0);
      expect(await count("SELECT count(*) n FROM memory_runs WHERE user_id = ?", u.id)).toBe(0);
    });
  }

  it("asks the queue for exponential backoff: 2, 4, 8 ... seconds, capped at 5 minutes", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "x" }]);
    const delays: (number | undefined)[] = [];
    const message = (attempts: number): Message<QueueMessage> => ({
      id: `m${attempts}`,
      timestamp: new Date(),
      attempts,
      body: { ...(sent[0] ?? consolidateMessage(u.id)) },
      ack: () => undefined,
      retry: (options) => delays.push(options?.delaySeconds),
    });
    await script(u.id, ...[1, 2, 3, 12].map(() => unusable));
    for (const attempts of [1, 2, 3, 12]) await consolidateMessages((await captured(u.id)).deps, consolidationModel(env), [message(attempts)]);
    expect(delays).toEqual([2, 4, 8, 300]);
  });

  it("retries when the model API keeps failing (after the SDK's own retries)", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "x" }]);
    await script(u.id, ...[1, 2, 3].map(() => ({ status: 500 as const, structured: true })));
    expect((await deliver(sent)).retryMessages).toHaveLength(1);
  });
});

describe("consolidation into projects", () => {
  it("files a batch's facts under the project its observations name only when that project is the user's", async () => {
    const u = await createUser();
    const other = await createUser();
    const project = async (key: string, name: string) => ((await (await api(key, "POST", "/v1/projects", { name })).json()) as { id: string }).id;
    const mine = await project(u.key, "Garden");
    const theirs = await project(other.key, "Their plans");
    const projectOf = async (text: string) =>
      (await userD1(u.id)).prepare("SELECT project_id AS p FROM facts WHERE user_id = ? AND text = ?").bind(u.id, text).first<{ p: string | null }>();

    const cases = [
      { projectId: mine, text: "User grows tomatoes on the balcony", filed: mine },
      { projectId: theirs, text: "User plans a launch in March", filed: null },
      { projectId: "prj_does_not_exist", text: "User keeps bees", filed: null },
    ];
    for (const c of cases) {
      const { sent } = await observe(u.id, [{ content: c.text, sourceMetadata: { source: "test", project_id: c.projectId } }]);
      await script(u.id, consolidation({ updated_scaffold: {}, updated_working_memory: "Gardening.", facts_to_embed: [c.text] }));
      expect((await deliver(sent)).explicitAcks).toHaveLength(1);
      expect(await projectOf(c.text)).toEqual({ p: c.filed });
    }
    expect(await count("SELECT count(*) n FROM facts WHERE project_id = ?", theirs)).toBe(0);
  });
});

describe("deleting a connection while a consolidation runs", () => {
  it("writes none of the run's facts about that connection, and they replace nothing; the rest of the run applies", async () => {
    const u = await createUser();
    const conn = (await (await api(u.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    const [older] = (await importFacts(u.key, [{ text: "The default Jira project is OLD" }])).facts;
    await observe(u.id, [
      { content: "The default Jira project is PROJ", sourceMetadata: { source: "test", connection_id: conn.id } },
      { content: "I prefer short emails" },
    ]);
    // The user deletes the connection, and with it the facts scoped to it, while the model thinks.
    let deleted = 0;
    const client = slowModel(async () => {
      deleted = (await api(u.key, "DELETE", `/v1/connections/${conn.id}`)).status;
      return {
        updated_scaffold: {},
        updated_working_memory: "Prefers short emails.",
        facts_to_embed: [{ text: "The default Jira project is PROJ", connection_id: conn.id, supersedes: [older?.id] }, "User prefers short emails"],
      };
    });
    expect(await consolidateUser((await captured(u.id)).deps, { client, model: "m" }, u.id)).toMatchObject({ status: "applied" });
    expect(deleted).toBe(200);
    const live = (await getJson<Facts>(u.key, "/v1/memory/facts")).facts;
    expect(live.map((f) => f.text).sort()).toEqual(["The default Jira project is OLD", "User prefers short emails"]);
    expect(await count("SELECT count(*) n FROM facts WHERE connection_id = ?", conn.id)).toBe(0);
    expect((await getJson<Working>(u.key, "/v1/memory/working")).working_memory).toBe("Prefers short emails.");
  });
});

describe("exactly once", () => {
  it("applies a duplicate delivery once, with one model call", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "I live in Porto" }]);
    await script(u.id, consolidation({ updated_scaffold: { City: "Porto" }, updated_working_memory: "In Porto.", facts_to_embed: ["User lives in Porto"] }));
    const twice = await deliver([...sent, ...sent]);
    expect(twice.explicitAcks).toHaveLength(2);
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
    expect(await seen(u.id)).toHaveLength(1);
    expect(await count("SELECT count(*) n FROM memory_runs WHERE user_id = ?", u.id)).toBe(1);
    expect(await count("SELECT count(*) n FROM facts WHERE user_id = ?", u.id)).toBe(1);
  });

  it("lets only one of two concurrent consolidations of the same events commit", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "I live in Porto" }]);
    const out = (city: string) =>
      consolidation({ updated_scaffold: { City: city }, updated_working_memory: `In ${city}.`, facts_to_embed: [`User's home city is ${city}`] });
    await script(u.id, out("Porto"), out("Lisbon"));
    const [a, b] = await Promise.all([deliver(sent), deliver(sent)]);
    const acked = a.explicitAcks.length + b.explicitAcks.length;
    const retried = a.retryMessages.length + b.retryMessages.length;
    expect(acked + retried).toBe(2);
    expect(acked).toBeGreaterThanOrEqual(1);
    expect(await count("SELECT count(*) n FROM memory_runs WHERE user_id = ?", u.id)).toBe(1);
    expect(await count("SELECT count(*) n FROM facts WHERE user_id = ?", u.id)).toBe(1);
    const city = (await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold.City;
    expect((await getJson<Working>(u.key, "/v1/memory/working")).working_memory).toBe(`In ${String(city)}.`);
    // A retry of the loser finds nothing left to do.
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
  });
});

describe("dead letters", () => {
  it("marks the events of a dead-lettered message failed, visibly, and they can be retried", async () => {
    const u = await createUser();
    const { events, sent } = await observe(u.id, [{ content: "x" }, { content: "y" }]);
    await script(u.id, unusable);
    await deliver(sent, 5);
    const dlq = await deliver(sent, 1, "engram-observations-dlq");
    expect(dlq.explicitAcks).toHaveLength(1);
    const failed = await getJson<Events>(u.key, "/v1/memory/events?status=failed");
    expect(failed.events.map((e) => e.id).sort()).toEqual(events.map((e) => e.id).sort());
    expect(failed.events[0]?.error).toMatch(/gave up after 1 failed attempts; last error: MalformedOutput/);
    expect(await count("SELECT count(*) n FROM audit_logs WHERE user_id = ? AND action = 'queue.dead_letter'", u.id)).toBe(1);
    // Another user cannot see or retry them.
    const other = await createUser();
    expect((await getJson<Events>(other.key, "/v1/memory/events")).events).toEqual([]);
    expect(await (await api(other.key, "POST", "/v1/memory/events/retry")).json()).toEqual({ retried: [] });
    const retried = (await (await api(u.key, "POST", "/v1/memory/events/retry")).json()) as { retried: string[] };
    expect(retried.retried.sort()).toEqual(events.map((e) => e.id).sort());
    expect(await count("SELECT count(*) n FROM context_events WHERE user_id = ? AND status = 'failed'", u.id)).toBe(0);
  });
});

describe("budget", () => {
  it("defers events over the daily consolidation budget, says so, and resumes when it allows", async () => {
    const u = await createUser();
    await (await userD1(u.id))
      .prepare("INSERT INTO usage (id, user_id, kind, model, input_tokens, output_tokens) VALUES (?, ?, 'consolidation', 'm', 199000, 1000)")
      .bind(`use_${u.id}`, u.id)
      .run();
    const res = await api(u.key, "POST", "/v1/observations", { observations: [{ type: "learned_fact", content: "User likes tea" }] });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { events: { status: string; error: string }[]; budget: { exhausted: boolean } };
    expect(body.budget.exhausted).toBe(true);
    expect(body.events[0]).toMatchObject({ status: "deferred", error: expect.stringMatching(/daily consolidation budget of 200000 tokens is used up/) });
    expect((await getJson<Working>(u.key, "/v1/memory/working")).pending_events).toBe(1);

    const { deps, sent } = await captured(u.id);
    expect((await sweepMemory(deps, Date.now())).resumed).toBe(0);
    await (await userD1(u.id)).prepare("DELETE FROM usage WHERE user_id = ?").bind(u.id).run();
    expect((await sweepMemory(deps, Date.now())).resumed).toBe(1);
    expect(sent.filter((m) => m.userId === u.id)).toHaveLength(1);
    expect((await getJson<Events>(u.key, "/v1/memory/events")).events[0]?.status).toBe("pending");
  });

  it("defers pending events in the consumer when the budget ran out meanwhile, without a model call", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "x" }]);
    await (await userD1(u.id))
      .prepare("INSERT INTO usage (id, user_id, kind, model, input_tokens, output_tokens) VALUES (?, ?, 'consolidation', 'm', 500000, 0)")
      .bind(`use_${u.id}`, u.id)
      .run();
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
    expect(await seen(u.id)).toEqual([]);
    expect((await getJson<Events>(u.key, "/v1/memory/events")).events[0]?.status).toBe("deferred");
  });
});

describe("cron sweep", () => {
  it("re-enqueues events left pending past the threshold, and the queue path stays idempotent", async () => {
    const u = await createUser();
    const old = await observe(u.id, [{ content: "I play chess" }]);
    const fresh = await observe(u.id, [{ content: "I play go" }]);
    await (await userD1(u.id))
      .prepare("UPDATE context_events SET created_at = created_at - ? WHERE id = ?")
      .bind(STALE_PENDING_MS + 1000, old.events[0]?.id)
      .run();
    const { deps, sent } = await captured(u.id);
    await sweepMemory(deps, Date.now());
    const mine = sent.filter((m) => m.userId === u.id);
    expect(mine).toEqual([consolidateMessage(u.id, [old.events[0]?.id ?? ""])]);
    await script(
      u.id,
      consolidation({
        updated_scaffold: { Games: ["chess", "go"] },
        updated_working_memory: "Plays chess and go.",
        facts_to_embed: ["User plays chess", "User plays go"],
      }),
    );
    await deliver(mine);
    // The original (late) message and the sweep's both arrive: applied once.
    expect((await deliver([...old.sent, ...fresh.sent])).explicitAcks).toHaveLength(2);
    expect(await seen(u.id)).toHaveLength(1);
    expect(await count("SELECT count(*) n FROM context_events WHERE user_id = ? AND status = 'processed'", u.id)).toBe(2);
    const again = await captured(u.id);
    await sweepMemory(again.deps, Date.now());
    expect(again.sent.filter((m) => m.userId === u.id)).toEqual([]);
  });

  it("runs as a registered cron job", async () => {
    const results = await runScheduled(registry.cronJobs, env, Date.now());
    expect(results["memory.sweep"]).toMatchObject({ requeued: expect.any(Number), resumed: expect.any(Number), embedded: expect.any(Number) });
  });
});

describe("the user's own corrections of working memory and scaffold", () => {
  type Runs = { runs: { rev: number; kind: string; summary: Record<string, unknown> }[] };

  it("replaces the narrative: the next turn is told the user's text, and the edit is a run", async () => {
    const u = await createUser();
    const put = await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Ana moved to Lyon\u200b and is planning a bakery." });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ working_memory: "Ana moved to Lyon and is planning a bakery.", words: 9 });
    expect((await getJson<Runs>(u.key, "/v1/memory/runs")).runs).toMatchObject([{ rev: 1, kind: "edit", summary: { working_memory_words: 9 } }]);
    await script(u.id, textReply("Bonjour"));
    const res = await api(u.key, "POST", "/v1/chat", { message: "hi", stream: false });
    expect(res.status).toBe(200);
    expect(JSON.stringify((await seen(u.id)).at(-1))).toContain("Ana moved to Lyon and is planning a bakery.");
    // Empty clears it.
    expect(await (await api(u.key, "PUT", "/v1/memory/working", { working_memory: "" })).json()).toMatchObject({ working_memory: "", words: 0 });
  });

  it("refuses a narrative over 500 words and bad bodies, changing nothing", async () => {
    const u = await createUser();
    await api(u.key, "PUT", "/v1/memory/working", { working_memory: "kept" });
    const over = await api(u.key, "PUT", "/v1/memory/working", { working_memory: "w ".repeat(501) });
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ error: { code: "limit_exceeded" } });
    for (const body of [{}, { working_memory: 5 }, { working_memory: "x", extra: 1 }]) {
      expect((await api(u.key, "PUT", "/v1/memory/working", body)).status).toBe(400);
    }
    expect((await getJson<Working>(u.key, "/v1/memory/working")).working_memory).toBe("kept");
    expect((await getJson<Runs>(u.key, "/v1/memory/runs")).runs).toHaveLength(1);
  });

  it("sets and removes scaffold keys with confidence 1, leaving the other keys and other users alone", async () => {
    const u = await createUser();
    const other = await createUser();
    const { sent } = await observe(u.id, [{ content: "I live in Porto" }]);
    await script(
      u.id,
      consolidation({ updated_scaffold: { City: "Porto", Role: "Baker", Pets: ["cat"] }, updated_working_memory: "In Porto.", facts_to_embed: [] }),
    );
    await deliver(sent);
    await api(other.key, "PATCH", "/v1/memory/scaffold", { scaffold: { City: "Oslo" } });
    const res = await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { City: "Lyon", Pets: null, Goals: { shop: "open a bakery" } } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Scaffold;
    expect(body.scaffold).toEqual({ City: "Lyon", Role: "Baker", Goals: { shop: "open a bakery" } });
    expect(body.confidence.City?.confidence).toBe(1);
    expect(body.confidence.Goals?.confidence).toBe(1);
    expect(body.confidence.Pets).toBeUndefined();
    expect((await getJson<Scaffold>(other.key, "/v1/memory/scaffold")).scaffold).toEqual({ City: "Oslo" });
    for (const bad of [{}, { scaffold: {} }, { scaffold: "City" }, { scaffold: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 1])) }]) {
      expect((await api(u.key, "PATCH", "/v1/memory/scaffold", bad)).status).toBe(400);
    }
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual(body.scaffold);
    // Edits cannot grow the profile without bound: 50 keys of ~3,900 characters at a time would.
    const big = (from: number) => ({ scaffold: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`note${from + i}`, "x".repeat(3900)])) });
    const grown = await api(u.key, "PATCH", "/v1/memory/scaffold", big(0));
    expect(grown.status).toBe(413);
    expect(await grown.json()).toMatchObject({ error: { code: "limit_exceeded" } });
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual(body.scaffold);
  });

  it("a consolidation that read the memory before the user's edit does not write over it: it is redone on top of it", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "I live in Porto" }]);
    const out = (city: string) => consolidation({ updated_scaffold: { City: city }, updated_working_memory: `Lives in ${city}.`, facts_to_embed: [] });
    // The first run's model call takes a while; the user corrects the scaffold meanwhile.
    await script(u.id, { ...out("Porto"), delay_ms: 1500 }, out("Lyon"));
    const running = deliver(sent);
    await new Promise((r) => setTimeout(r, 500));
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { City: "Lyon", Diet: "vegetarian" } })).status).toBe(200);
    const first = await running;
    expect(first.retryMessages).toHaveLength(1);
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ City: "Lyon", Diet: "vegetarian" });
    // The retry starts from the user's version.
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
    const prompts = (await seen(u.id)).map((r) => JSON.stringify(r.messages));
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toContain("vegetarian");
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ City: "Lyon", Diet: "vegetarian" });
    expect((await getJson<{ runs: { kind: string }[] }>(u.key, "/v1/memory/runs")).runs.map((r) => r.kind)).toEqual(["consolidation", "edit"]);
  });

  it("an observation made before the user's correction does not undo it; one made after it can", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "I live in Porto" }]);
    const out = (city: string) => consolidation({ updated_scaffold: { City: city }, updated_working_memory: `Lives in ${city}.`, facts_to_embed: [] });
    // The retry reads the same older observation and says Porto again, as a model would.
    await script(u.id, { ...out("Porto"), delay_ms: 1500 }, out("Porto"));
    const running = deliver(sent);
    await new Promise((r) => setTimeout(r, 500));
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { City: "Lyon" } })).status).toBe(200);
    expect((await running).retryMessages).toHaveLength(1);
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
    const after = await getJson<Scaffold>(u.key, "/v1/memory/scaffold");
    expect(after.scaffold).toEqual({ City: "Lyon" });
    expect(after.confidence.City?.confidence).toBe(1);
    // A move the user tells about later is news: it changes the key.
    const later = await observe(u.id, [{ content: "I moved back to Porto" }]);
    await script(u.id, out("Porto"));
    await deliver(later.sent);
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ City: "Porto" });
  });

  it("the user's correction wins over an observation made in the same millisecond", async () => {
    const u = await createUser();
    const { events, sent } = await observe(u.id, [{ content: "I live in Porto" }]);
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { City: "Lyon" } })).status).toBe(200);
    const editedAt = (await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).confidence.City?.updated_at;
    await (await userD1(u.id)).prepare("UPDATE context_events SET created_at = ? WHERE id = ?").bind(editedAt, events[0]?.id).run();
    await script(u.id, consolidation({ updated_scaffold: { City: "Porto" }, updated_working_memory: "Lives in Porto.", facts_to_embed: [] }));
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
    const after = await getJson<Scaffold>(u.key, "/v1/memory/scaffold");
    expect(after.scaffold).toEqual({ City: "Lyon" });
    expect(after.confidence.City).toMatchObject({ confidence: 1, by: "user" });
  });

  it("a key the user set keeps their confidence and authorship while later consolidations leave it as it is", async () => {
    const u = await createUser();
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { Diet: "vegetarian" } })).status).toBe(200);
    const set = (await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).confidence.Diet;
    // Said well after the edit, so the edit is not what protects the key.
    const { events, sent } = await observe(u.id, [{ content: "I live in Porto" }]);
    await (await userD1(u.id))
      .prepare("UPDATE context_events SET created_at = ? WHERE id = ?")
      .bind((set?.updated_at ?? 0) + 60_000, events[0]?.id)
      .run();
    await script(u.id, consolidation({ updated_scaffold: { City: "Porto" }, updated_working_memory: "In Porto.", facts_to_embed: [] }));
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
    const after = await getJson<Scaffold>(u.key, "/v1/memory/scaffold");
    expect(after.scaffold).toEqual({ Diet: "vegetarian", City: "Porto" });
    expect(after.confidence.Diet).toEqual(set);
    expect(after.confidence.City).toMatchObject({ confidence: 0.7 });
  });

  it("a key the user removed is not brought back by an observation made before the removal; one made after it can", async () => {
    const u = await createUser();
    const out = (pets: string[]) => consolidation({ updated_scaffold: { City: "Porto", Pets: pets }, updated_working_memory: "In Porto.", facts_to_embed: [] });
    const first = await observe(u.id, [{ content: "I have a cat" }]);
    await script(u.id, out(["cat"]));
    await deliver(first.sent);
    // Said before the removal, consolidated after it (pending, deferred or retried): the model still mentions the cat.
    const older = await observe(u.id, [{ content: "My cat is called Miso" }]);
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { Pets: null } })).status).toBe(200);
    await script(u.id, out(["cat"]));
    expect((await deliver(older.sent)).explicitAcks).toHaveLength(1);
    const after = await getJson<Scaffold>(u.key, "/v1/memory/scaffold");
    expect(after.scaffold).toEqual({ City: "Porto" });
    expect(Object.keys(after.confidence)).toEqual(["City"]);
    await script(u.id, textReply("Olá"));
    await api(u.key, "POST", "/v1/chat", { message: "hi", stream: false });
    expect(promptOf((await seen(u.id)).at(-1))).not.toContain("Pets");
    // News told after the removal puts the key back, as the model's like any other key.
    const later = await observe(u.id, [{ content: "I adopted a dog" }]);
    await script(u.id, out(["dog"]));
    await deliver(later.sent);
    const back = await getJson<Scaffold>(u.key, "/v1/memory/scaffold");
    expect(back.scaffold).toEqual({ City: "Porto", Pets: ["dog"] });
    expect(back.confidence.Pets).toMatchObject({ confidence: 0.7 });
    expect(back.confidence.Pets).not.toHaveProperty("by");
  });
});
