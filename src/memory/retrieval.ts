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
import type { MemoryDeps } from "./deps";
import { neighboursOf } from "./neighbours";
import { planSearch, queryTerms, rankCandidates, TUNING, type Tuning } from "./ranking";
import { readCandidates } from "./retrieval-reads";
import type { SearchHit, SearchInput, SearchResult } from "./search-types";

export { matchOf, queryTerms, TUNING, type Tuning, WEAK_MATCH } from "./ranking";
export { briefError } from "./retrieval-reads";
export type { Candidate, SearchHit, SearchInput, SearchMode, SearchOrder, SearchResult } from "./search-types";

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
  const { chosen, results, weak } = rankCandidates(plan, found, deps.embedder);
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
  `- ${hit.text.replace(/\s+/g, " ").trim().slice(0, maxChars)} (id ${hit.id}${hit.supersededBy ? ", since replaced" : ""})`;

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
