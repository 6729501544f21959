/**
 * Hybrid fact search: read the candidates (retrieval-reads.ts), rank them (ranking.ts, pure), then attach
 * neighbours if asked. Callers may filter (`after`/`before`) or order by time, and include superseded history.
 */
import { sql } from "drizzle-orm";
import { readBatch } from "../chat/read-batch";
import type { BatchedRead } from "../core/context";
import { runStatements, type Statement } from "../db/batch";
import { newId } from "../db/client";
import { inJson } from "../db/in-json";
import { facts, usage } from "../db/schema";
import { documentText } from "../lib/prompt-text";
import type { MemoryDeps } from "./deps";
import { neighboursOf } from "./neighbours";
import { planSearch, queryTerms, type Ranked, rankCandidates, type SearchPlan, TUNING, type Tuning } from "./ranking";
import { type Reranker, rerankUsage } from "./rerank";
import { briefError, readCandidates } from "./retrieval-reads";
import type { SearchHit, SearchInput, SearchResult } from "./search-types";

export { matchOf, queryTerms, TUNING, type Tuning, WEAK_MATCH } from "./ranking";
export { briefError } from "./retrieval-reads";
export type { Candidate, SearchHit, SearchInput, SearchMode, SearchOrder, SearchResult } from "./search-types";

/** How many of the fused best a reranker reads: a cross-encoder costs per text, and the answer is near the top. */
const RERANK_DEPTH = 20;

/**
 * The fused best, reordered by the reranker (production, `RERANK=on`) and cut to k. Its usage is recorded at once
 * (kind `rerank`). A reranker that fails leaves the fused order: the search degrades, it does not fail.
 */
async function rerank(deps: MemoryDeps, reranker: Reranker, plan: SearchPlan, ranked: Ranked): Promise<Ranked> {
  const cut = (order: number[]): Ranked => ({
    chosen: order
      .map((i) => ranked.chosen[i])
      .filter((x) => x !== undefined)
      .slice(0, plan.input.k),
    results: order
      .map((i) => ranked.results[i])
      .filter((x) => x !== undefined)
      .slice(0, plan.input.k),
    weak: ranked.weak,
  });
  const fused = ranked.results.map((_, i) => i);
  if (ranked.results.length < 2) return cut(fused);
  try {
    const { scores, tokens } = await reranker.rerank(
      plan.input.query,
      ranked.results.map((r) => r.text),
    );
    await rerankUsage(deps.db, { userId: plan.input.userId, model: reranker.model, tokens });
    return cut(fused.sort((a, b) => (scores[b] ?? 0) - (scores[a] ?? 0) || a - b));
  } catch (err) {
    console.warn(JSON.stringify({ event: "rerank_failed", error: briefError(err) }));
    return cut(fused);
  }
}

/** An FTS5 query matching any content word of the text (quoted: no operator injection). */
export function ftsQuery(text: string): string | null {
  const terms = queryTerms(text);
  return terms.length ? terms.map((t) => `"${t}"`).join(" OR ") : null;
}

/**
 * `read`: a batch the caller flushes (a chat turn's context read), which these reads join; without it the
 * search reads in one batch of its own. `tuning`: the product's measured choices, unless an evaluation ablates one.
 */
export async function searchFacts(deps: MemoryDeps, request: SearchInput, read?: BatchedRead, tuning: Tuning = TUNING): Promise<SearchResult> {
  const plan = planSearch(request, deps.now(), tuning);
  const batch = read ? { read, flush: async () => {} } : readBatch(deps.db);
  const reading = readCandidates(deps, plan, batch.read);
  await batch.flush();
  const found = await reading;
  const reranking = deps.reranker && plan.mode === "hybrid";
  const ranked = rankCandidates(reranking ? { ...plan, input: { ...plan.input, k: Math.max(plan.input.k, RERANK_DEPTH) } } : plan, found, deps.embedder);
  const { chosen, results, weak } = reranking && deps.reranker ? await rerank(deps, deps.reranker, plan, ranked) : ranked;
  if (plan.input.neighbours && results.length) {
    const around = await neighboursOf(
      deps.db,
      plan.input.userId,
      chosen.map((x) => x.c),
    );
    for (const r of results) r.neighbours = around.get(r.id) ?? [];
  }
  return {
    results,
    degraded: found.degraded,
    embeddingTokens: found.embeddingTokens,
    when: plan.cues.range,
    current: plan.input.preferLatest ?? plan.cues.current,
    weak,
  };
}

/**
 * A found fact as the model is shown it (the chat prompt's retrieved facts, the chat's and MCP's search tools):
 * its text on one line and its id, so the model can name it (to forget it), and whether a newer statement has
 * replaced it.
 */
export const factLine = (hit: Pick<SearchHit, "id" | "text" | "supersededBy">, maxChars = 2000) =>
  `- ${documentText(hit.text).slice(0, maxChars)} (id ${hit.id}${hit.supersededBy ? ", since replaced" : ""})`;

/** What a search tool answers: the lines, and a warning when even the best match is weak. */
export const searchAnswer = (found: Pick<SearchResult, "results" | "weak">) =>
  found.results.length
    ? `${found.weak ? "Weak matches only: these may not answer the question.\n" : ""}${found.results.map((r) => factLine(r)).join("\n")}`
    : "No matching facts.";

/** Injected facts were recalled: they rank up, and stop decaying, from now on. Records the query's embedding cost. */
export async function recordRecall(deps: MemoryDeps, userId: string, ids: readonly string[], embeddingTokens: number): Promise<void> {
  await runStatements(deps.db, recallWrites(deps, userId, ids, embeddingTokens));
}

/** `recordRecall`'s writes as statements, for a caller that sends them in a batch of its own (a chat turn's bookkeeping). */
export function recallWrites(deps: MemoryDeps, userId: string, ids: readonly string[], embeddingTokens: number): Statement[] {
  return [
    // `+user_id`: the primary key finds the few ids; left to itself the planner walks the user's whole
    // partition on a user_id index instead (measured: 10,000 rows for 5 ids, 25x slower).
    ...(ids.length
      ? [sql`UPDATE facts SET recall_count = recall_count + 1, last_recalled_at = ${deps.now()} WHERE +user_id = ${userId} AND ${inJson(facts.id, [...ids])}`]
      : []),
    ...(embeddingTokens
      ? [
          deps.db
            .insert(usage)
            .values({ id: newId("use"), userId, kind: "embedding", model: deps.embedder.model, inputTokens: embeddingTokens, outputTokens: 0 }),
        ]
      : []),
  ];
}
