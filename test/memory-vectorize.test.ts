import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { eraseUserMemory } from "../src/account/erase";
import { loadConfig } from "../src/config/config";
import { createDb } from "../src/db/client";
import { memoryDeps } from "../src/memory/deps";
import { dot, normalize } from "../src/memory/embed";
import { workersAiEmbedder } from "../src/memory/embed-workers-ai";
import { eraseMemory } from "../src/memory/erase";
import { deleteFact, importFacts } from "../src/memory/facts";
import { searchFacts } from "../src/memory/retrieval";
import type { VectorIndex } from "../src/memory/vector";
import { FreshOverlayIndex, OVERLAY_SCORED, OVERLAY_WINDOW_MS, pruneOverlay, VectorizeVectorIndex } from "../src/memory/vector-vectorize";
import { FakeVectorize } from "./fakes/vectorize";
import { FakeWorkersAi } from "./fakes/workers-ai";
import { createUser as createUserOn } from "./helpers";
import { captured } from "./memory-helpers";
import { userD1, userDb } from "./shard-helpers";

/** The deps below are built before their users exist, over shard 0 (the directory's database): the users live there. */
const createUser = () => createUserOn("free", 0);

const ai = new FakeWorkersAi();

/** The environment production runs in: the Vectorize and Workers AI bindings (faked) beside the real D1 and queue. */
function productionEnv(vectorize: FakeVectorize, workersAi = ai) {
  return { ...env, VECTORS: vectorize.binding, AI: workersAi.binding };
}

const productionConfig = () => ({ ...loadConfig(env), vectorBackend: "vectorize" as const });

/**
 * Memory deps exactly as production builds them (memoryDeps with VECTOR_BACKEND=vectorize and the default model,
 * bge-m3): Workers AI embeddings of 1024 dimensions into a lagging Vectorize behind the D1 overlay.
 */
async function productionPath(vectorize = new FakeVectorize({ dimensions: 1024 })) {
  const deps = { ...memoryDeps(productionEnv(vectorize), productionConfig(), createDb(env.DB)), queue: (await captured(null)).deps.queue };
  const overlay = deps.vectors;
  return { vectorize, overlay, deps };
}

/** An embedder of 8 dimensions, for the overlay's scoring on hand-made vectors. */
const tiny = { model: "tiny", dimensions: 8 };

describe("production vectors (Vectorize + Workers AI) behind the same interfaces", () => {
  it("finds a fact by similarity right after it is stored, before Vectorize has indexed it, and forgets it at once", async () => {
    const u = await createUser();
    const { vectorize, deps } = await productionPath();
    const [fact] = (await importFacts(deps, u.id, [{ text: "User's favourite climbing gym is in Porto" }])).facts;
    const found = await searchFacts(deps, { userId: u.id, query: "favourite climbing gym", k: 5, connectionIds: [], mode: "vector" });
    expect(found.results.map((r) => r.id)).toEqual([fact?.id]);
    // The user's own namespace, no filter, as many matches as Vectorize returns without values or metadata.
    expect(vectorize.queries.at(-1)).toEqual({ topK: 100, namespace: u.id, returnMetadata: "none" });

    vectorize.flush();
    expect((await searchFacts(deps, { userId: u.id, query: "climbing gym", k: 5, connectionIds: [], mode: "vector" })).results).toHaveLength(1);
    // Another user's query never sees it.
    const other = await createUser();
    expect((await searchFacts(deps, { userId: other.id, query: "climbing gym", k: 5, connectionIds: [], mode: "vector" })).results).toEqual([]);

    // Deleted: Vectorize still returns it until it catches up, but retrieval hydrates from D1.
    await deleteFact(deps, u.id, fact?.id ?? "");
    expect((await searchFacts(deps, { userId: u.id, query: "climbing gym", k: 5, connectionIds: [], mode: "vector" })).results).toEqual([]);
  });

  it("forgetting a fact drops the vectors of the statements it had replaced, whose removal failed when they were replaced", async () => {
    const { vectorize, deps: production } = await productionPath();
    for (const deps of [(await captured(null)).deps, production]) {
      const u = await createUser();
      const [old] = (await importFacts(deps, u.id, [{ text: "I live in Porto", key: "user.home_city" }])).facts;
      // The index refuses deletes while the new statement replaces the old one: the old vector stays behind.
      const deletesFail = Object.assign(Object.create(deps.vectors) as VectorIndex, { delete: () => Promise.reject(new Error("index unavailable")) });
      const [current] = (await importFacts({ ...deps, vectors: deletesFail }, u.id, [{ text: "I live in Lisbon", key: "user.home_city" }])).facts;
      const vectorsOf = async () => {
        vectorize.flush();
        const rows = await (await userD1(u.id)).prepare("SELECT id FROM local_vectors WHERE user_id = ?").bind(u.id).all<{ id: string }>();
        return [...rows.results.map((r) => r.id), ...(await vectorize.getByIds([old?.id ?? ""])).map((v) => v.id)];
      };
      expect(await vectorsOf()).toContain(old?.id);

      const forgotten = await deleteFact(deps, u.id, current?.id ?? "");
      expect(await vectorsOf()).toEqual([]);
      expect(forgotten).toEqual([current?.id, old?.id]);
    }
  });

  it("a forget whose Vectorize delete fails still drops the fact's vector from the D1 overlay", async () => {
    const u = await createUser();
    const { vectorize, deps } = await productionPath();
    const [fact] = (await importFacts(deps, u.id, [{ text: "My bank PIN is 4921" }])).facts;
    const overlayRows = async () =>
      (await (await userD1(u.id)).prepare("SELECT id FROM local_vectors WHERE user_id = ?").bind(u.id).all<{ id: string }>()).results;
    expect(await overlayRows()).toHaveLength(1);
    vectorize.deleteByIds = () => Promise.reject(new Error("Vectorize unavailable"));
    await deleteFact(deps, u.id, fact?.id ?? "");
    expect(await overlayRows()).toEqual([]);
  });

  it("indexes an import of 30 facts at once and finds the last of them before Vectorize has caught up", async () => {
    const u = await createUser();
    const { overlay, deps } = await productionPath();
    const topics = ["sailing", "pottery", "chess", "baking", "cycling", "origami"];
    const items = Array.from({ length: 30 }, (_, i) => ({ text: `User's hobby number ${i} is ${topics[i % topics.length]} on day ${i}` }));
    const imported = await importFacts(deps, u.id, items);
    expect(imported.indexing).toBeUndefined();
    expect(imported.embedded).toBe(30);
    const last = imported.facts.at(-1)?.id;
    const found = await searchFacts(deps, { userId: u.id, query: items[29]?.text ?? "", k: 30, connectionIds: [], mode: "vector" });
    expect(found.results.map((r) => r.id)).toContain(last);
    // Storage is shared by this file's tests: the pruning test below counts overlay rows.
    await overlay.erase(u.id, []);
  });

  it("scores only the newest overlay vectors: an import larger than that is found by similarity once Vectorize has it", async () => {
    const u = await createUser();
    const { vectorize, overlay, deps } = await productionPath();
    const items = Array.from({ length: OVERLAY_SCORED + 8 }, (_, i) => ({ text: `Trip number ${i} went to harbour town ${i}` }));
    const imported = await importFacts(deps, u.id, items);
    const [first, last] = [imported.facts[0]?.id, imported.facts.at(-1)?.id];
    const byVector = async () =>
      (await searchFacts(deps, { userId: u.id, query: "trip harbour town", k: 100, connectionIds: [], mode: "vector" })).results.map((r) => r.id);
    expect(await byVector()).toContain(last);
    expect(await byVector()).not.toContain(first);
    // Full text finds every one of them at once.
    const byText = await searchFacts(deps, { userId: u.id, query: items[0]?.text ?? "", k: 5, connectionIds: [], mode: "fulltext" });
    expect(byText.results.map((r) => r.id)).toContain(first);
    vectorize.flush();
    expect(await byVector()).toContain(first);
    // Storage is shared by this file's tests: the pruning test below counts overlay rows.
    await overlay.erase(u.id, []);
  });

  it("scores the overlay's recent vectors by their exact cosine with the query, the user's own only", async () => {
    const [u, other] = [await createUser(), await createUser()];
    const overlay = new FreshOverlayIndex(new VectorizeVectorIndex(new FakeVectorize({ dimensions: 8 }), tiny), await userDb(u.id), Date.now);
    const vec = (values: number[]) => normalize(new Map(values.map((v, i) => [i, v])));
    // Sparse vectors (stored as pairs) and dense ones (every dimension from 0, as Workers AI's: stored as values).
    const stored = {
      a: vec([1, 2, 0, -1, 0, 0, 3, 0]),
      b: vec([0, 0, 5, 1, 0, 2, 0, 0]),
      c: vec([2, 0, 0, 0, 1, 0, 0, -4]),
      d: vec([1, -1, 2, 1, 3, 1, 1, 2]),
      e: vec([3, 1, -2, 0, 0, 0, 0, 0]),
    };
    await overlay.upsert(Object.entries(stored).map(([k, vector]) => ({ id: `${k}-${u.id}`, userId: u.id, vector, metadata: {} })));
    await overlay.upsert([{ id: `x-${other.id}`, userId: other.id, vector: vec([1, 2, 0, -1, 0, 0, 3, 0]), metadata: {} }]);
    const query = vec([1, 1, 1, 0, 0, 1, 2, -1]);
    const expected = Object.entries(stored)
      .map(([k, v]) => ({ id: `${k}-${u.id}`, score: dot(query, v) }))
      .sort((x, y) => y.score - x.score);
    const got = await overlay.query(u.id, query, 10);
    expect(got.map((m) => m.id)).toEqual(expected.map((m) => m.id));
    got.forEach((m, i) => expect(m.score).toBeCloseTo(expected[i]?.score ?? Number.NaN, 12));
    // Storage is shared by this file's tests: the pruning test below counts overlay rows.
    for (const id of [u.id, other.id]) await overlay.erase(id, []);
  });

  it("prunes only overlay rows past the window, never the local index's own rows", async () => {
    const u = await createUser();
    const db = await userDb(u.id);
    const at = Date.now();
    const overlay = new FreshOverlayIndex(new VectorizeVectorIndex(new FakeVectorize({ dimensions: 8 }), tiny), db, () => at);
    await overlay.upsert([{ id: `ov-${u.id}`, userId: u.id, vector: { indices: [0], values: [1] }, metadata: {} }]);
    await (await captured(u.id)).deps.vectors.upsert([{ id: `lo-${u.id}`, userId: u.id, vector: { indices: [1], values: [1] }, metadata: {} }]);
    expect(await pruneOverlay(db, at + OVERLAY_WINDOW_MS - 1)).toBe(0);
    expect(await pruneOverlay(db, at + OVERLAY_WINDOW_MS + 1)).toBe(1);
    const left = await (await userD1(u.id)).prepare("SELECT id FROM local_vectors WHERE user_id = ?").bind(u.id).all<{ id: string }>();
    expect(left.results.map((r) => r.id)).toEqual([`lo-${u.id}`]);
  });

  it("an erase removes from Vectorize the vector of a fact written while the erase was being prepared", async () => {
    const u = await createUser();
    const vectorize = new FakeVectorize({ dimensions: 1024 });
    const prodEnv = productionEnv(vectorize);
    const config = productionConfig();
    const db = await userDb(u.id);
    const deps = memoryDeps(prodEnv, config, db);
    await importFacts(deps, u.id, [{ text: "I keep my passport in the blue drawer" }]);
    // Memory's part of the erase is planned first; the user's other device then stores a fact, before the batch runs.
    let late: string | undefined;
    const writesMeanwhile = async () => {
      late = (await importFacts(deps, u.id, [{ text: "The spare key is with the neighbour" }])).facts[0]?.id;
      return { statements: [] };
    };
    const receipt = await eraseUserMemory(
      [eraseMemory, writesMeanwhile],
      { env: prodEnv, config, db, userId: u.id, now: Date.now() },
      async () => undefined,
      null,
    );
    expect(receipt.erased).toMatchObject({ facts: 2, vectors: 2 });
    vectorize.flush();
    expect(await vectorize.getByIds([late ?? ""])).toEqual([]);
    expect(vectorize.idsIn(u.id)).toEqual([]);
  });

  it("embeds with each model in calls of at most 100 texts, in its documented input shape and dimension", async () => {
    for (const [model, dimensions, options] of [
      ["@cf/baai/bge-m3", 1024, { truncate_inputs: true }],
      ["@cf/baai/bge-base-en-v1.5", 768, { pooling: "mean" }],
    ] as const) {
      const fake = new FakeWorkersAi();
      const texts = Array.from({ length: 250 }, (_, i) => `text ${i}`);
      const out = await workersAiEmbedder(fake.binding, model).embed(texts);
      expect(fake.inputsTo(model)).toEqual([
        { text: texts.slice(0, 100), ...options },
        { text: texts.slice(100, 200), ...options },
        { text: texts.slice(200), ...options },
      ]);
      expect(out.vectors).toHaveLength(250);
      expect(out.vectors.every((v) => v.indices.length > 0 && v.indices.every((i) => i < dimensions))).toBe(true);
      expect((out.vectors[0]?.values ?? []).reduce((s, v) => s + v * v, 0)).toBeCloseTo(1, 6);
    }
  });

  it("embeds a text in any script, and fails clearly on an error or an answer not in the documented shape", async () => {
    const embedder = workersAiEmbedder(ai.binding);
    const [tokyo, query] = (await embedder.embed(["彼女は東京に住んでいます", "東京"])).vectors;
    expect(dot(tokyo ?? { indices: [], values: [] }, query ?? { indices: [], values: [] })).toBeGreaterThan(0.1);

    const answering = (out: unknown) => ({ run: async () => out }) as unknown as Ai;
    await expect(workersAiEmbedder(answering({ shape: [1, 1024], response: [[0.1]] })).embed(["x"])).rejects.toThrow(
      "Workers AI @cf/baai/bge-m3 returned no embeddings for 1 texts (keys shape, response)",
    );
    await expect(workersAiEmbedder(answering({ shape: [1, 768], data: [new Array(768).fill(0.1)] })).embed(["x"])).rejects.toThrow(
      "returned embedding 0 that is not 1024 numbers",
    );
    const failing = new FakeWorkersAi();
    failing.failNext(new Error("3040: Capacity temporarily exceeded"));
    await expect(workersAiEmbedder(failing.binding).embed(["x"])).rejects.toThrow("Workers AI @cf/baai/bge-m3 failed: 3040: Capacity temporarily exceeded");
    expect(await workersAiEmbedder(failing.binding).embed([])).toEqual({ vectors: [], tokens: 0 });
  });

  it("keeps each user's vectors in a Vectorize namespace of their own, with the fact's scope as metadata", async () => {
    const [u, other] = [await createUser(), await createUser()];
    const { vectorize, overlay, deps } = await productionPath();
    const [fact] = (await importFacts(deps, u.id, [{ text: "Mi gato se llama Tomás" }])).facts;
    await importFacts(deps, other.id, [{ text: "Mon chat s'appelle Tomás" }]);
    vectorize.flush();
    expect(vectorize.idsIn(u.id)).toEqual([fact?.id]);
    const [stored] = await vectorize.getByIds([fact?.id ?? ""]);
    expect(stored).toMatchObject({ namespace: u.id, metadata: { context_type: "user_persistent", source: "user_provided" } });
    expect(stored?.metadata).not.toHaveProperty("user_id");
    // Straight to Vectorize, past the overlay: another user's namespace holds none of it.
    const index = new VectorizeVectorIndex(vectorize, deps.embedder);
    const [query] = (await deps.embedder.embed(["gato Tomás"])).vectors;
    const q = query ?? { indices: [], values: [] };
    expect((await index.query(u.id, q, 10)).map((m) => m.id)).toEqual([fact?.id]);
    expect((await index.query(other.id, q, 10)).map((m) => m.id)).not.toContain(fact?.id);
    await expect(index.upsert([{ id: "x", userId: "u".repeat(65), vector: q, metadata: {} }])).rejects.toThrow("longer than Vectorize's 64 bytes");
    // Storage is shared by this file's tests: the pruning test below counts overlay rows.
    for (const id of [u.id, other.id]) await overlay.erase(id, []);
  });

  it("fails clearly when the index was made for another model: imports keep the facts, searches fall back to full text", async () => {
    const u = await createUser();
    const vectorize = new FakeVectorize({ dimensions: 768 });
    const describe = vi.spyOn(vectorize, "describe");
    const { overlay, deps } = await productionPath(vectorize);
    const why = "the Vectorize index has 768 dimensions but @cf/baai/bge-m3 makes 1024: bind an index created with --dimensions=1024 --metric=cosine";
    const imported = await importFacts(deps, u.id, [{ text: "The staging database is Postgres 16" }]);
    expect(imported.facts).toHaveLength(1);
    expect(imported.indexing).toContain(why);
    const found = await searchFacts(deps, { userId: u.id, query: "staging database", k: 5, connectionIds: [] });
    expect(found.degraded).toBe(`vector search unavailable: ${why}`);
    expect(found.results.map((r) => r.id)).toEqual([imported.facts[0]?.id]);
    // Asked once for this binding, not once a call.
    expect(describe).toHaveBeenCalledTimes(1);
    await overlay.erase(u.id, []);
  });

  it("is selected by VECTOR_BACKEND=vectorize when the bindings exist", () => {
    const vectorize = new FakeVectorize({ dimensions: 1024 });
    const config = productionConfig();
    const deps = memoryDeps(productionEnv(vectorize), config, createDb(env.DB));
    expect(deps.vectors.name).toBe("vectorize+overlay");
    expect(deps.embedder).toMatchObject({ model: "@cf/baai/bge-m3", dimensions: 1024 });
    const english = memoryDeps(productionEnv(vectorize), { ...config, embeddingModel: "@cf/baai/bge-base-en-v1.5" }, createDb(env.DB));
    expect(english.embedder).toMatchObject({ model: "@cf/baai/bge-base-en-v1.5", dimensions: 768 });
    expect(memoryDeps(env, loadConfig(env), createDb(env.DB)).vectors.name).toBe("local");
  });
});
