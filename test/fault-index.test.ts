/**
 * Embedder and vector index outages on the consolidation path: the consolidated facts still land in D1
 * (searchable by full text at once), the observations are consolidated exactly once (not retried into a
 * second application), and the cron sweep embeds the facts when the outage is over.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { QueueMessage } from "../src/core/queue";
import type { Embedder } from "../src/memory/embed";
import { consolidateMessages, consolidationModel } from "../src/memory/queue";
import { sweepMemory } from "../src/memory/sweep";
import { count, repairAll, takeDown } from "./fault-helpers";
import { createUser, script, seen } from "./helpers";
import { captured, consolidation, deliver, getJson, observe, search } from "./memory-helpers";

afterEach(repairAll);

type Facts = { facts: { text: string; embedded: boolean }[] };
const LATER = 120_000;

const reply = (fact: string) => consolidation({ updated_scaffold: {}, updated_working_memory: fact, facts_to_embed: [fact] });

describe("vector index outage during consolidation", () => {
  it("stores the facts (full-text searchable), acks the message, applies a redelivery once, and the sweep embeds them after", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "My favourite tea is sencha" }]);
    await script(u.id, reply("User's favourite tea is sencha"));
    const repair = await takeDown("local_vector_postings");
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
    expect((await deliver(sent, 2)).explicitAcks).toHaveLength(1);
    expect(await count("SELECT count(*) n FROM memory_runs WHERE user_id = ?", u.id)).toBe(1);
    expect(await seen(u.id)).toHaveLength(1);
    expect((await getJson<Facts>(u.key, "/v1/memory/facts")).facts).toEqual([
      expect.objectContaining({ text: "User's favourite tea is sencha", embedded: false }),
    ]);
    expect((await search(u.key, "sencha", "&mode=fulltext")).results.map((r) => r.text)).toEqual(["User's favourite tea is sencha"]);

    await repair();
    const { deps } = await captured(u.id);
    expect((await sweepMemory(deps, Date.now() + LATER)).embedded).toBeGreaterThanOrEqual(1);
    expect((await getJson<Facts>(u.key, "/v1/memory/facts")).facts[0]?.embedded).toBe(true);
    expect((await search(u.key, "which tea do I like best", "&mode=vector")).results.map((r) => r.text)).toEqual(["User's favourite tea is sencha"]);
  });
});

describe("embedder outage during consolidation", () => {
  it("stores the facts unembedded, consolidates once, and the sweep embeds them with the embedder back", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "I am allergic to peanuts" }]);
    await script(u.id, reply("User is allergic to peanuts"));
    const down: Embedder = { model: "down", dimensions: 8, minScore: 0, embed: () => Promise.reject(new Error("embedding service down")) };
    const { deps } = await captured(u.id, { embedder: down });
    const batch = createMessageBatch<QueueMessage>(
      "engram-observations",
      sent.map((body, i) => ({ id: `emb-${i}`, timestamp: new Date(), attempts: 1, body })),
    );
    await consolidateMessages(deps, consolidationModel(env), batch.messages);
    expect((await getQueueResult(batch, createExecutionContext())).explicitAcks).toHaveLength(1);
    expect((await getJson<Facts>(u.key, "/v1/memory/facts")).facts).toEqual([
      expect.objectContaining({ text: "User is allergic to peanuts", embedded: false }),
    ]);
    // Hybrid search degrades to full text while the embedder is down.
    const { searchFacts } = await import("../src/memory/retrieval");
    const degraded = await searchFacts(deps, { userId: u.id, query: "peanuts", k: 5, connectionIds: [] });
    expect(degraded.results.map((r) => r.text)).toEqual(["User is allergic to peanuts"]);
    expect(degraded.degraded).toMatch(/embedding service down/);

    const back = await captured(u.id);
    expect((await sweepMemory(back.deps, Date.now() + LATER)).embedded).toBeGreaterThanOrEqual(1);
    expect((await getJson<Facts>(u.key, "/v1/memory/facts")).facts[0]?.embedded).toBe(true);
    expect(await count("SELECT count(*) n FROM memory_runs WHERE user_id = ?", u.id)).toBe(1);
  });
});
