/**
 * The reranker seam: a cross-encoder reads the query together with each candidate text and scores how well the
 * text answers it, which similarity of two separate embeddings cannot. It costs one more Workers AI call per
 * search, so it is for a search's few best fused candidates, and production only: offline there is none, and a
 * search whose reranker fails keeps its fused order.
 */
import type { PriceOverrides } from "../config/models";
import { DEFAULT_RERANK_MODEL } from "../config/workers-ai";
import type { Db } from "../db/client";
import { approxTokens } from "../lib/text";
import { usageInsert } from "../usage/record";
import { runModel, shapeOf } from "./workers-ai";

export interface Reranker {
  readonly model: string;
  /** Relevance of each text to the query, in input order (higher is better), and the tokens billed. */
  rerank(query: string, texts: readonly string[]): Promise<{ scores: number[]; tokens: number }>;
}

/**
 * Workers AI's bge-reranker-base: input `{query, contexts: [{text}], top_k?}`, answer `{response: [{id, score}]}`
 * with `id` the context's index, best first. Scores are the model's raw relevance (its page: a sigmoid maps them
 * to [0, 1]); they order one query's texts and are not comparable across queries.
 */
export function workersAiReranker(ai: Ai, model: string = DEFAULT_RERANK_MODEL): Reranker {
  const run = runModel(ai);
  return {
    model,
    async rerank(query, texts) {
      if (!texts.length) return { scores: [], tokens: 0 };
      // The model refuses empty strings; a blank one is a caller's bug, better named here than by the model.
      if (!query.trim()) throw new Error(`reranker ${model}: the query is empty`);
      const blank = texts.findIndex((t) => !t.trim());
      if (blank >= 0) throw new Error(`reranker ${model}: text ${blank} is empty`);
      // top_k = every text: a default below the number of contexts would drop some without saying so.
      const out = await run(model, { query, contexts: texts.map((text) => ({ text })), top_k: texts.length });
      // Workers AI reports no usage for this model: estimated as the (query, text) pairs the cross-encoder reads.
      const tokens = texts.reduce((n, t) => n + approxTokens(query) + approxTokens(t), 0);
      return { scores: scoresOf(model, out, texts.length), tokens };
    },
  };
}

/** The answer's scores back in input order; every text must be scored exactly once. */
function scoresOf(model: string, out: unknown, count: number): number[] {
  const response = out !== null && typeof out === "object" && "response" in out ? out.response : undefined;
  if (!Array.isArray(response)) throw new Error(`Workers AI ${model} returned no scores (${shapeOf(out)})`);
  const scores = new Array<number | undefined>(count).fill(undefined);
  for (const item of response) {
    const id: unknown = item !== null && typeof item === "object" && "id" in item ? item.id : undefined;
    const score: unknown = item !== null && typeof item === "object" && "score" in item ? item.score : undefined;
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id >= count || scores[id] !== undefined) {
      throw new Error(`Workers AI ${model} returned a score for no text of the ${count} sent (id ${JSON.stringify(id)})`);
    }
    if (typeof score !== "number" || !Number.isFinite(score)) throw new Error(`Workers AI ${model} returned a score that is not a number for text ${id}`);
    scores[id] = score;
  }
  const scored = scores.filter((s): s is number => s !== undefined);
  if (scored.length !== count) throw new Error(`Workers AI ${model} scored ${scored.length} of the ${count} texts sent`);
  return scored;
}

/**
 * The usage row of one rerank (kind `rerank`), to write with the search's own bookkeeping; null when it used
 * nothing. Its cost is 0 unless MODEL_PRICES prices the model.
 */
export const rerankUsage = (db: Db, row: { userId: string; model: string; tokens: number; sessionId?: string | null; prices?: PriceOverrides }) =>
  usageInsert(db, {
    userId: row.userId,
    kind: "rerank",
    model: row.model,
    usage: { input_tokens: row.tokens, output_tokens: 0 },
    sessionId: row.sessionId ?? null,
    prices: row.prices ?? {},
  });
