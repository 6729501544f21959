import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eraseUserMemory } from "../src/account/erase";
import { loadConfig } from "../src/config/config";
import { createDb } from "../src/db/client";
import { memoryDeps } from "../src/memory/deps";
import { dot, hashEmbed, normalize, type TextEmbeddings, workersAiEmbedder } from "../src/memory/embed";
import { eraseMemory } from "../src/memory/erase";
import { deleteFact, importFacts } from "../src/memory/facts";
import { searchFacts } from "../src/memory/retrieval";
import type { VectorIndex } from "../src/memory/vector";
import { FreshOverlayIndex, OVERLAY_SCORED, OVERLAY_WINDOW_MS, pruneOverlay, VectorizeVectorIndex } from "../src/memory/vector-vectorize";
import { createUser } from "./helpers";
import { captured } from "./memory-helpers";

/**
 * A stand-in for the Vectorize binding (unavailable offline) that behaves like it in the way that matters
 * here: writes become visible to queries only when the index catches up (`flush`).
 */
function laggingVectorize() {
  const visible = new Map<string, VectorizeVector>();
  let pending: (() => void)[] = [];
  const calls: { filter?: unknown; topK?: number }[] = [];
  const index: VectorizeIndex = {
    describe: async () => ({ id: "fake", name: "engram-facts", config: { dimensions: 8, metric: "cosine" }, vectorsCount: visible.size }),
    async query(vector, options) {
      calls.push({ filter: options?.filter, topK: options?.topK });
      const q = [...vector];
      const userId = (options?.filter as { user_id?: string } | undefined)?.user_id;
      const matches = [...visible.values()]
        .filter((v) => v.metadata?.user_id === userId)
        .map((v) => ({ id: v.id, score: [...v.values].reduce((s, x, i) => s + x * (q[i] ?? 0), 0) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, options?.topK ?? 5);
      return { matches, count: matches.length };
    },
    insert: async () => ({ ids: [], count: 0 }),
    async upsert(vectors) {
      pending.push(() => vectors.forEach((v) => visible.set(v.id, v)));
      return { ids: vectors.map((v) => v.id), count: vectors.length };
    },
    async deleteByIds(ids) {
      pending.push(() => ids.forEach((id) => visible.delete(id)));
      return { ids, count: ids.length };
    },
    getByIds: async (ids) => ids.flatMap((id) => visible.get(id) ?? []),
  };
  return {
    index,
    calls,
    flush() {
      pending.forEach((apply) => apply());
      pending = [];
    },
  };
}

/** The local hashing embedder folded into 8 dense dimensions, so the fake index gets dense vectors as Vectorize would. */
const tinyAi: TextEmbeddings & { batches: number[] } = {
  batches: [],
  async run(_model, input) {
    this.batches.push(input.text.length);
    return {
      data: input.text.map((t) => {
        const v = new Array<number>(8).fill(0);
        const s = hashEmbed(t);
        s.indices.forEach((i, k) => (v[i % 8] = (v[i % 8] ?? 0) + (s.values[k] ?? 0)));
        return v;
      }),
    };
  },
};

/** Memory deps on the production path: Workers AI (tinyAi) and a lagging Vectorize behind the D1 overlay. */
function productionPath() {
  const vectorize = laggingVectorize();
  const embedder = workersAiEmbedder(tinyAi);
  const base = captured().deps;
  const overlay = new FreshOverlayIndex(new VectorizeVectorIndex(vectorize.index, embedder.dimensions), base.db, base.now);
  return { vectorize, overlay, deps: { ...base, embedder: { ...embedder, minScore: 0 }, vectors: overlay } };
}

describe("production vectors (Vectorize + Workers AI) behind the same interfaces", () => {
  it("finds a fact by similarity right after it is stored, before Vectorize has indexed it, and forgets it at once", async () => {
    const u = await createUser();
    const { vectorize, deps } = productionPath();
    const [fact] = (await importFacts(deps, u.id, [{ text: "User's favourite climbing gym is in Porto" }])).facts;
    const found = await searchFacts(deps, { userId: u.id, query: "favourite climbing gym", k: 5, connectionIds: [], mode: "vector" });
    expect(found.results.map((r) => r.id)).toEqual([fact?.id]);
    expect(vectorize.calls.at(-1)).toEqual({ filter: { user_id: u.id }, topK: 100 });

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
    const { vectorize, deps: production } = productionPath();
    for (const deps of [captured().deps, production]) {
      const u = await createUser();
      const [old] = (await importFacts(deps, u.id, [{ text: "I live in Porto", key: "user.home_city" }])).facts;
      // The index refuses deletes while the new statement replaces the old one: the old vector stays behind.
      const deletesFail = Object.assign(Object.create(deps.vectors) as VectorIndex, { delete: () => Promise.reject(new Error("index unavailable")) });
      const [current] = (await importFacts({ ...deps, vectors: deletesFail }, u.id, [{ text: "I live in Lisbon", key: "user.home_city" }])).facts;
      const vectorsOf = async () => {
        vectorize.flush();
        const rows = await env.DB.prepare("SELECT id FROM local_vectors WHERE user_id = ?").bind(u.id).all<{ id: string }>();
        return [...rows.results.map((r) => r.id), ...(await vectorize.index.getByIds([old?.id ?? ""])).map((v) => v.id)];
      };
      expect(await vectorsOf()).toContain(old?.id);

      const forgotten = await deleteFact(deps, u.id, current?.id ?? "");
      expect(await vectorsOf()).toEqual([]);
      expect(forgotten).toEqual([current?.id, old?.id]);
    }
  });

  it("a forget whose Vectorize delete fails still drops the fact's vector from the D1 overlay", async () => {
    const u = await createUser();
    const { vectorize, deps } = productionPath();
    const [fact] = (await importFacts(deps, u.id, [{ text: "My bank PIN is 4921" }])).facts;
    const overlayRows = async () => (await env.DB.prepare("SELECT id FROM local_vectors WHERE user_id = ?").bind(u.id).all<{ id: string }>()).results;
    expect(await overlayRows()).toHaveLength(1);
    vectorize.index.deleteByIds = () => Promise.reject(new Error("Vectorize unavailable"));
    await deleteFact(deps, u.id, fact?.id ?? "");
    expect(await overlayRows()).toEqual([]);
  });

  it("indexes an import of 30 facts at once and finds the last of them before Vectorize has caught up", async () => {
    const u = await createUser();
    const { overlay, deps } = productionPath();
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
    const { vectorize, overlay, deps } = productionPath();
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
    const vectorize = laggingVectorize();
    const overlay = new FreshOverlayIndex(new VectorizeVectorIndex(vectorize.index, 8), createDb(env.DB), Date.now);
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
    const db = createDb(env.DB);
    const vectorize = laggingVectorize();
    const at = Date.now();
    const overlay = new FreshOverlayIndex(new VectorizeVectorIndex(vectorize.index, 8), db, () => at);
    await overlay.upsert([{ id: `ov-${u.id}`, userId: u.id, vector: { indices: [0], values: [1] }, metadata: {} }]);
    await captured().deps.vectors.upsert([{ id: `lo-${u.id}`, userId: u.id, vector: { indices: [1], values: [1] }, metadata: {} }]);
    expect(await pruneOverlay(db, at + OVERLAY_WINDOW_MS - 1)).toBe(0);
    expect(await pruneOverlay(db, at + OVERLAY_WINDOW_MS + 1)).toBe(1);
    const left = await env.DB.prepare("SELECT id FROM local_vectors WHERE user_id = ?").bind(u.id).all<{ id: string }>();
    expect(left.results.map((r) => r.id)).toEqual([`lo-${u.id}`]);
  });

  it("an erase removes from Vectorize the vector of a fact written while the erase was being prepared", async () => {
    const u = await createUser();
    const vectorize = laggingVectorize();
    const prodEnv = { ...env, VECTORS: vectorize.index, AI: tinyAi as unknown as Ai };
    const config = { ...loadConfig(env), vectorBackend: "vectorize" as const };
    const db = createDb(env.DB);
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
    expect(await vectorize.index.getByIds([late ?? ""])).toEqual([]);
  });

  it("embeds with Workers AI in batches of 100 and rejects a malformed answer", async () => {
    tinyAi.batches = [];
    const out = await workersAiEmbedder(tinyAi).embed(Array.from({ length: 250 }, (_, i) => `text ${i}`));
    expect(tinyAi.batches).toEqual([100, 100, 50]);
    expect(out.vectors).toHaveLength(250);
    const sum = (out.vectors[0]?.values ?? []).reduce((s, v) => s + v * v, 0);
    expect(sum).toBeCloseTo(1, 6);
    await expect(workersAiEmbedder({ run: async () => ({ shape: [0] }) }).embed(["x"])).rejects.toThrow(/no embeddings/);
  });

  it("is selected by VECTOR_BACKEND=vectorize when the bindings exist", () => {
    const vectorize = laggingVectorize();
    const config = { ...loadConfig(env), vectorBackend: "vectorize" as const };
    const deps = memoryDeps({ ...env, VECTORS: vectorize.index, AI: tinyAi as unknown as Ai }, config, createDb(env.DB));
    expect(deps.vectors.name).toBe("vectorize+overlay");
    expect(deps.embedder.model).toBe("@cf/baai/bge-base-en-v1.5");
    expect(memoryDeps(env, loadConfig(env), createDb(env.DB)).vectors.name).toBe("local");
  });
});
