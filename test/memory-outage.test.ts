import { afterEach, describe, expect, it } from "vitest";
import type { Embedder } from "../src/memory/embed";
import { searchFacts } from "../src/memory/retrieval";
import { sweepMemory } from "../src/memory/sweep";
import { chat, createUser, promptOf, script, searchResultsOf, seen, textReply } from "./helpers";
import { captured, getJson, importFacts, search } from "./memory-helpers";
import { runOnAllShards, userD1 } from "./shard-helpers";

type Log = { injected: { sections: { name: string }[]; skipped: { name: string; reason: string }[] } };

const brokenEmbedder: Embedder = { model: "broken", dimensions: 8, minScore: 0, embed: async () => Promise.reject(new Error("embedding service down")) };

// The local index lives in these tables; renaming them is a real outage of the index, not a mock.
const breakIndex = () => runOnAllShards("ALTER TABLE local_vector_postings RENAME TO local_vector_postings_down");
const repairIndex = () => runOnAllShards("ALTER TABLE local_vector_postings_down RENAME TO local_vector_postings");
let broken = false;
afterEach(async () => {
  if (broken) await repairIndex();
  broken = false;
});

describe("graceful degradation", () => {
  it("answers the turn without the retrieved-facts block when the vector index is down, and the audit row says why", async () => {
    const u = await createUser();
    await importFacts(u.key, [{ text: "User's dog is called Biscuit" }]);
    await (await userD1(u.id)).prepare("UPDATE users SET working_memory = 'Walks the dog daily.' WHERE id = ?").bind(u.id).run();
    await breakIndex();
    broken = true;
    await script(u.id, textReply("Still here."));
    const { text } = await chat(u.key, { message: "what is my dog called?" });
    expect(text).toBe("Still here.");
    const system = promptOf((await seen(u.id))[0]);
    expect(system).toContain("Walks the dog daily.");
    expect(system).not.toContain("Biscuit");
    expect(searchResultsOf((await seen(u.id))[0])).toEqual([]);
    const log = (await getJson<{ context_logs: Log[] }>(u.key, "/v1/memory/context-logs")).context_logs[0];
    expect(log?.injected.sections.map((s) => s.name)).toContain("working_memory");
    expect(log?.injected.skipped).toContainEqual({
      name: "retrieved_facts",
      reason: expect.stringMatching(/^unavailable: vector search unavailable: .*local_vector_postings/),
    });

    // The search API degrades to full text and says so.
    const hits = await search(u.key, "dog Biscuit");
    expect(hits.results.map((r) => r.text)).toEqual(["User's dog is called Biscuit"]);
    expect(hits.degraded).toMatch(/vector search unavailable/);
  });

  it("a failing embedder degrades search to full text", async () => {
    const u = await createUser();
    await importFacts(u.key, [{ text: "User's cat is called Miso" }]);
    const { deps } = await captured(u.id, { embedder: brokenEmbedder });
    const found = await searchFacts(deps, { userId: u.id, query: "cat Miso", k: 5, connectionIds: [] });
    expect(found.results.map((r) => r.text)).toEqual(["User's cat is called Miso"]);
    expect(found.degraded).toBe("vector search unavailable: embedding service down");
  });

  it("stores facts while the index is down (searchable by text at once) and the sweep embeds them later", async () => {
    const u = await createUser();
    await breakIndex();
    broken = true;
    const out = await importFacts(u.key, [{ text: "User's favourite tea is sencha" }]);
    expect(out.embedded).toBe(0);
    expect(out.indexing).toMatch(/will be retried/);
    expect((await search(u.key, "sencha tea", "&mode=fulltext")).results).toHaveLength(1);
    await repairIndex();
    broken = false;
    expect((await search(u.key, "which tea do I like best", "&mode=vector")).results).toEqual([]);
    const { deps } = await captured(u.id);
    expect((await sweepMemory(deps, Date.now() + 120_000)).embedded).toBeGreaterThanOrEqual(1);
    expect((await search(u.key, "which tea do I like best", "&mode=vector")).results.map((r) => r.text)).toEqual(["User's favourite tea is sencha"]);
    expect((await getJson<{ facts: { embedded: boolean }[] }>(u.key, "/v1/memory/facts")).facts[0]?.embedded).toBe(true);
  });
});
