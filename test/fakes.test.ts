import { describe, expect, it } from "vitest";
import { FakeVectorize } from "./fakes/vectorize";
import { AiError, FakeWorkersAi } from "./fakes/workers-ai";

/** The fakes stand in for bindings that cannot run offline: they must refuse what the documented APIs refuse. */
describe("fake Workers AI", () => {
  const ai = new FakeWorkersAi();

  it("answers each embedding model in its documented shape and dimension", async () => {
    expect(await ai.run("@cf/baai/bge-m3", { text: ["un", "deux"] })).toMatchObject({ shape: [2, 1024], data: [expect.any(Array), expect.any(Array)] });
    const base = (await ai.run("@cf/baai/bge-base-en-v1.5", { text: "one" })) as { shape: number[]; data: number[][]; pooling: string };
    expect(base).toMatchObject({ shape: [1, 768], pooling: "mean" });
    expect(base.data[0]).toHaveLength(768);
    // bge-m3 with contexts and no query: the contexts' embeddings, under `response`.
    expect(await ai.run("@cf/baai/bge-m3", { contexts: [{ text: "a" }] })).toMatchObject({ shape: [1, 1024], response: [expect.any(Array)] });
    // With a query: scores by context index.
    expect(await ai.run("@cf/baai/bge-m3", { query: "cat", contexts: [{ text: "dog" }, { text: "cat" }] })).toMatchObject({ response: [{ id: 1 }, { id: 0 }] });
  });

  it.each([
    ["@cf/baai/bge-small-en-v1.5", { text: ["x"] }, /No such model/],
    ["@cf/baai/bge-m3", { texts: ["x"] }, /required properties at '\/' are 'text'/],
    ["@cf/baai/bge-m3", { text: Array.from({ length: 101 }, () => "x") }, /at most 100 items/],
    ["@cf/baai/bge-m3", { text: [""] }, /non-empty string/],
    ["@cf/baai/bge-m3", { text: ["x"], contexts: [{ text: "x" }] }, /exactly one of its schemas/],
    ["@cf/baai/bge-m3", { text: ["word ".repeat(8000)] }, /longer than 8192 tokens/],
    ["@cf/baai/bge-base-en-v1.5", { text: ["x"], pooling: "max" }, /'pooling' must be "mean" or "cls"/],
    ["@cf/baai/bge-reranker-base", { contexts: [{ text: "x" }] }, /required property 'query'/],
    ["@cf/baai/bge-reranker-base", { query: "q", contexts: [{ text: "" }] }, /contexts\[0\]\.text must be a non-empty string/],
    ["@cf/baai/bge-reranker-base", { query: "q", contexts: [{ text: "x" }], top_k: 0 }, /'top_k' must be an integer of at least 1/],
  ])("rejects %s %j", async (model, inputs, message) => {
    await expect(ai.run(model, inputs)).rejects.toThrow(AiError);
    await expect(ai.run(model, inputs)).rejects.toThrow(message);
  });

  it("truncates instead of failing when bge-m3 is asked to", async () => {
    expect(await ai.run("@cf/baai/bge-m3", { text: ["word ".repeat(8000)], truncate_inputs: true })).toMatchObject({ shape: [1, 1024] });
  });
});

describe("fake Vectorize", () => {
  const unit = (i: number, dims = 8) => Array.from({ length: dims }, (_, k) => (k === i ? 1 : 0));

  it("scores by cosine within a namespace, once the index has caught up", async () => {
    const index = new FakeVectorize({ dimensions: 8 });
    await index.upsert([
      { id: "a", values: unit(0), namespace: "u1" },
      { id: "b", values: [1, 1, 0, 0, 0, 0, 0, 0], namespace: "u1" },
      { id: "c", values: unit(0), namespace: "u2" },
    ]);
    expect((await index.query(unit(0), { namespace: "u1" })).matches).toEqual([]);
    index.flush();
    const { matches } = await index.query(unit(0), { namespace: "u1", topK: 10 });
    expect(matches.map((m) => m.id)).toEqual(["a", "b"]);
    expect(matches[1]?.score).toBeCloseTo(Math.SQRT1_2, 12);
    expect((await index.query(unit(0), { namespace: "u3" })).count).toBe(0);
  });

  it.each([
    ["upsert", (i: FakeVectorize) => i.upsert([{ id: "a", values: unit(0, 7) }]), /has 7 dimensions, the index has 8/],
    ["upsert", (i: FakeVectorize) => i.upsert([{ id: "x".repeat(65), values: unit(0) }]), /vector id must be 1 to 64 bytes/],
    ["upsert", (i: FakeVectorize) => i.upsert([{ id: "é".repeat(33), values: unit(0) }]), /vector id must be 1 to 64 bytes/],
    ["upsert", (i: FakeVectorize) => i.upsert([{ id: "a", values: unit(0), namespace: "n".repeat(65) }]), /namespace is at most 64 bytes/],
    ["upsert", (i: FakeVectorize) => i.upsert(Array.from({ length: 1001 }, (_, k) => ({ id: `v${k}`, values: unit(0) }))), /at most 1000 vectors/],
    ["upsert", (i: FakeVectorize) => i.upsert([{ id: "a", values: unit(0), metadata: { "a.b": 1 } }]), /metadata key "a.b"/],
    ["query", (i: FakeVectorize) => i.query(unit(0, 9)), /query vector has 9 dimensions/],
    ["query", (i: FakeVectorize) => i.query(unit(0), { topK: 101 }), /topK must be an integer from 1 to 100/],
    ["query", (i: FakeVectorize) => i.query(unit(0), { topK: 21, returnMetadata: "all" }), /from 1 to 20 with returnValues/],
    ["query", (i: FakeVectorize) => i.query(unit(0), { topK: 21, returnValues: true }), /from 1 to 20 with returnValues/],
    ["query", (i: FakeVectorize) => i.query(unit(0), { returnMetadata: true }), /returnMetadata must be/],
  ])("rejects a bad %s", async (_op, call, message) => {
    await expect(call(new FakeVectorize({ dimensions: 8 }))).rejects.toThrow(message);
  });

  it("allows topK 100 with indexed metadata, caps namespaces, and filters on declared metadata indexes only", async () => {
    const index = new FakeVectorize({ dimensions: 8, maxNamespaces: 2, metadataIndexes: ["project"], lagging: false });
    await index.upsert([{ id: "a", values: unit(0), namespace: "u1", metadata: { project: "p", kind: "k" } }]);
    expect((await index.query(unit(0), { topK: 100, returnMetadata: "indexed" })).matches).toEqual([{ id: "a", score: 1, metadata: { project: "p" } }]);
    expect((await index.query(unit(0), { filter: { project: "p" } })).count).toBe(1);
    expect((await index.query(unit(0), { filter: { kind: "k" } })).count).toBe(0);
    await index.upsert([{ id: "b", values: unit(1), namespace: "u2" }]);
    await expect(index.upsert([{ id: "c", values: unit(1), namespace: "u3" }])).rejects.toThrow(/at most 2 namespaces/);
    expect(await index.describe()).toMatchObject({ dimensions: 8, vectorCount: 2 });
  });
});
