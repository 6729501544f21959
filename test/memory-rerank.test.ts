import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import { createDb } from "../src/db/client";
import { type MemoryDeps, memoryDeps } from "../src/memory/deps";
import { type Reranker, rerankUsage, workersAiReranker } from "../src/memory/rerank";
import { searchFacts } from "../src/memory/retrieval";
import { FakeVectorize } from "./fakes/vectorize";
import { FakeWorkersAi } from "./fakes/workers-ai";
import { createUser } from "./helpers";
import { captured, importFacts } from "./memory-helpers";
import { userD1, userDb } from "./shard-helpers";

const MODEL = "@cf/baai/bge-reranker-base";
/** A binding whose every call answers `out`, for answers the documented model would not give. */
const answering = (out: unknown) => ({ run: async () => out }) as unknown as Ai;

describe("the Workers AI reranker", () => {
  it("sends the documented input and gives the scores back in input order", async () => {
    const ai = new FakeWorkersAi();
    const texts = ["User feeds the dog at 7", "User's cat is called Tomás", "User prefers tea"];
    const { scores, tokens } = await workersAiReranker(ai.binding).rerank("what is the cat called", texts);
    expect(ai.inputsTo(MODEL)).toEqual([{ query: "what is the cat called", contexts: texts.map((text) => ({ text })), top_k: 3 }]);
    // The fake answers best first; the reranker puts each score back at its text's index.
    const answer = (await ai.run(MODEL, { query: "what is the cat called", contexts: texts.map((text) => ({ text })) })) as {
      response: { id: number; score: number }[];
    };
    expect(answer.response[0]?.id).toBe(1);
    expect(scores).toEqual(texts.map((_, i) => answer.response.find((r) => r.id === i)?.score));
    expect(scores.indexOf(Math.max(...scores))).toBe(1);
    expect(tokens).toBeGreaterThan(0);
  });

  it("maps an answer in any order back to the texts", async () => {
    const reranker = workersAiReranker(
      answering({
        response: [
          { id: 2, score: 3.5 },
          { id: 0, score: -1.25 },
          { id: 1, score: 0 },
        ],
      }),
    );
    expect((await reranker.rerank("q", ["a", "b", "c"])).scores).toEqual([-1.25, 0, 3.5]);
  });

  it("makes no call for no texts, and refuses a blank query or text before calling", async () => {
    const ai = new FakeWorkersAi();
    const reranker = workersAiReranker(ai.binding);
    expect(await reranker.rerank("q", [])).toEqual({ scores: [], tokens: 0 });
    await expect(reranker.rerank(" ", ["a"])).rejects.toThrow(`reranker ${MODEL}: the query is empty`);
    await expect(reranker.rerank("q", ["a", ""])).rejects.toThrow(`reranker ${MODEL}: text 1 is empty`);
    expect(ai.calls).toEqual([]);
  });

  it("surfaces a failed call as an Error naming the model, so the search can degrade", async () => {
    const ai = new FakeWorkersAi();
    ai.failNext(new Error("3040: Capacity temporarily exceeded"));
    await expect(workersAiReranker(ai.binding).rerank("q", ["a"])).rejects.toThrow(`Workers AI ${MODEL} failed: 3040: Capacity temporarily exceeded`);
    // The fake refuses a model it does not serve, as Workers AI does; the message says which.
    await expect(workersAiReranker(ai.binding, "@cf/baai/bge-reranker-v2-m3").rerank("q", ["a"])).rejects.toThrow(
      "Workers AI @cf/baai/bge-reranker-v2-m3 failed: No such model",
    );
  });

  it.each([
    [{ result: [] }, "returned no scores (keys result)"],
    [{ response: [{ id: 0, score: 1 }] }, "scored 1 of the 2 texts sent"],
    [
      {
        response: [
          { id: 0, score: 1 },
          { id: 0, score: 2 },
        ],
      },
      "returned a score for no text of the 2 sent (id 0)",
    ],
    [{ response: [{ id: 2, score: 1 }] }, "returned a score for no text of the 2 sent (id 2)"],
    [{ response: [{ id: 0, score: "high" }] }, "returned a score that is not a number for text 0"],
  ])("rejects an answer not in the documented shape: %j", async (out, message) => {
    await expect(workersAiReranker(answering(out)).rerank("q", ["a", "b"])).rejects.toThrow(`Workers AI ${MODEL} ${message}`);
  });

  it("records its usage as kind rerank, priced by MODEL_PRICES", async () => {
    const u = await createUser();
    const db = await userDb(u.id);
    const prices = { [MODEL]: { input: 0.0031, output: 0, cacheWrite: 0, cacheRead: 0 } };
    await rerankUsage(db, { userId: u.id, model: MODEL, tokens: 2_000_000, prices });
    expect(rerankUsage(db, { userId: u.id, model: MODEL, tokens: 0 })).toBeNull();
    const rows = await (await userD1(u.id)).prepare("SELECT kind, model, input_tokens, cost_usd FROM usage WHERE user_id = ?").bind(u.id).all();
    expect(rows.results).toEqual([{ kind: "rerank", model: MODEL, input_tokens: 2_000_000, cost_usd: 0.0062 }]);
  });

  it("is part of memory's deps only when RERANK is on and the AI binding exists", () => {
    const ai = new FakeWorkersAi();
    const prod = { ...env, VECTORS: new FakeVectorize({ dimensions: 1024 }).binding, AI: ai.binding };
    const config = { ...loadConfig(env), vectorBackend: "vectorize" as const };
    expect(memoryDeps(prod, { ...config, rerank: true }, createDb(env.DB)).reranker?.model).toBe(MODEL);
    expect(memoryDeps(prod, config, createDb(env.DB)).reranker).toBeUndefined();
    expect(memoryDeps(env, loadConfig(env), createDb(env.DB)).reranker).toBeUndefined();
  });
});

describe("fact search with a reranker", () => {
  const texts = ["Our dog is called Biscuit", "The dog park opens at eight", "A dog walker comes on Mondays"];
  /** Scores the text that names the dog highest: a cross-encoder's judgement, not the words it shares. */
  const naming: Reranker = { model: MODEL, rerank: async (_q, ts) => ({ scores: ts.map((t) => (t.includes("Biscuit") ? 5 : 0)), tokens: 42 }) };
  const search = (deps: MemoryDeps, userId: string) => searchFacts(deps, { userId, query: "dog park walker dog", k: 2, connectionIds: [] });

  it("reorders the fused best by the reranker's scores, cuts to k and records its usage", async () => {
    const u = await createUser();
    await importFacts(
      u.key,
      texts.map((text) => ({ text })),
    );
    const plain = await search((await captured(u.id)).deps, u.id);
    expect(plain.results[0]?.text).not.toBe(texts[0]);
    const reranked = await search((await captured(u.id, { reranker: naming })).deps, u.id);
    expect(reranked.results.map((r) => r.text)).toHaveLength(2);
    expect(reranked.results[0]?.text).toBe(texts[0]);
    const rows = await (await userD1(u.id)).prepare("SELECT kind, input_tokens FROM usage WHERE user_id = ?").bind(u.id).all();
    expect(rows.results).toContainEqual({ kind: "rerank", input_tokens: 42 });
  });

  it("keeps the fused order when the reranker fails", async () => {
    const u = await createUser();
    await importFacts(
      u.key,
      texts.map((text) => ({ text })),
    );
    const failing: Reranker = { model: MODEL, rerank: async () => Promise.reject(new Error("3040: Capacity temporarily exceeded")) };
    const plain = await search((await captured(u.id)).deps, u.id);
    expect((await search((await captured(u.id, { reranker: failing })).deps, u.id)).results.map((r) => r.id)).toEqual(plain.results.map((r) => r.id));
  });
});
