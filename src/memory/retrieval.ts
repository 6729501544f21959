/**
 * Hybrid retrieval: BM25 over `facts_fts` and vector similarity, fused by reciprocal rank, then weighted
 * by confidence, reinforcement (recalls) and staleness. Both halves are filtered to
 * user_id = me AND (connection_id IN active OR NULL), superseded facts excluded, duplicates removed.
 * Read-your-writes: the full-text half reads D1 directly, and the vector half's index is D1 too
 * (locally) or has a D1 overlay of recent writes (Vectorize).
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { facts, usage, type JsonObject } from "../db/schema";
import { runStatements } from "../db/batch";
import type { MemoryDeps } from "./deps";
import { isStopword, normalizeText, words } from "./text";
import { inJson } from "./vector";

export type SearchMode = "hybrid" | "fulltext" | "vector";
export type SearchInput = { userId: string; query: string; k: number; connectionIds: readonly string[]; mode?: SearchMode };
export type SearchHit = { id: string; text: string; score: number; metadata: JsonObject; confidence: number };
export type SearchResult = { results: SearchHit[]; degraded: string | null; embeddingTokens: number };

type Candidate = { id: string; text: string; metadata: string; confidence: number; recall_count: number; last_recalled_at: number | null; created_at: number };

const CANDIDATES = 50;
const RRF_K = 60;
const HALF_LIFE_DAYS = 90;

/** An FTS5 query matching any content word of the text (quoted: no operator injection). */
export function ftsQuery(text: string): string | null {
  const terms = [...new Set(words(text).filter((w) => !isStopword(w) && (w.length > 1 || /\d/.test(w))))].slice(0, 32);
  return terms.length ? terms.map((t) => `"${t}"`).join(" OR ") : null;
}

const columns = sql`f.id, f.text, f.metadata, f.confidence, f.recall_count, f.last_recalled_at, f.created_at`;
const scoped = (userId: string, connectionIds: readonly string[]) =>
  sql`f.user_id = ${userId} AND f.superseded_by IS NULL AND (f.connection_id IS NULL OR f.connection_id IN (SELECT value FROM json_each(${JSON.stringify(connectionIds)})))`;

/** The user's partition of `facts_fts` (see migration 0005): `facts.owner` is the user id without underscores. */
const ownerToken = (userId: string) => `"${userId.replace(/_/g, "").replace(/"/g, '""')}"`;

function fullText(db: Db, input: SearchInput): Promise<Candidate[]> {
  const terms = ftsQuery(input.query);
  if (!terms) return Promise.resolve([]);
  const match = `owner : ${ownerToken(input.userId)} AND text : (${terms})`;
  // Ranked inside FTS5 first (its ORDER BY rank LIMIT fast path), then scoped and hydrated.
  return db.all<Candidate>(sql`SELECT ${columns} FROM (SELECT rowid, rank FROM facts_fts WHERE facts_fts MATCH ${match} ORDER BY rank LIMIT ${CANDIDATES * 4}) h
    JOIN facts f ON f.rowid = h.rowid WHERE ${scoped(input.userId, input.connectionIds)} ORDER BY h.rank LIMIT ${CANDIDATES}`);
}

async function vectorSearch(deps: MemoryDeps, input: SearchInput): Promise<{ hits: Candidate[]; tokens: number }> {
  const { vectors, tokens } = await deps.embedder.embed([input.query]);
  const [vector] = vectors;
  if (!vector) return { hits: [], tokens };
  const matches = (await deps.vectors.query(input.userId, vector, CANDIDATES)).filter((m) => m.score >= deps.embedder.minScore);
  if (!matches.length) return { hits: [], tokens };
  const rows = await deps.db.all<Candidate>(sql`SELECT ${columns} FROM facts f WHERE ${inJson(sql`f.id`, matches.map((m) => m.id))} AND ${scoped(input.userId, input.connectionIds)}`);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { hits: matches.flatMap((m) => byId.get(m.id) ?? []), tokens };
}

/** The root cause in one short line: audit rows and API answers carry no query text. */
export function briefError(err: unknown): string {
  const root = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return (root instanceof Error ? root.message : String(root)).split("\n")[0]?.slice(0, 200) ?? "unknown error";
}

/** Confidence, reinforcement and decay: a multiplier around 1 that reorders close calls, never relevance. */
export function quality(c: Pick<Candidate, "confidence" | "recall_count" | "last_recalled_at" | "created_at">, now: number): number {
  const touched = Math.max(c.created_at, c.last_recalled_at ?? 0);
  const ageDays = Math.max(0, now - touched) / 86_400_000;
  const freshness = 0.6 + 0.4 * 2 ** (-ageDays / HALF_LIFE_DAYS);
  return (0.6 + 0.4 * c.confidence) * (1 + 0.15 * Math.log1p(c.recall_count)) * freshness;
}

export async function searchFacts(deps: MemoryDeps, input: SearchInput): Promise<SearchResult> {
  const mode = input.mode ?? "hybrid";
  let degraded: string | null = null;
  const [text, vector] = await Promise.all([
    mode === "vector" ? [] : fullText(deps.db, input),
    mode === "fulltext"
      ? { hits: [], tokens: 0 }
      : vectorSearch(deps, input).catch((err: unknown) => {
          degraded = `vector search unavailable: ${briefError(err)}`;
          return { hits: [], tokens: 0 };
        }),
  ]);
  const lists: Candidate[][] = [];
  if (mode !== "vector") lists.push(text);
  if (mode !== "fulltext") lists.push(vector.hits);
  const fused = new Map<string, { c: Candidate; rrf: number }>();
  for (const list of lists) {
    list.forEach((c, rank) => {
      const entry = fused.get(c.id) ?? { c, rrf: 0 };
      entry.rrf += 1 / (RRF_K + rank + 1);
      fused.set(c.id, entry);
    });
  }
  // Scaled so that first place in every list, at full quality, scores 1.
  const best = lists.length / (RRF_K + 1);
  const now = deps.now();
  const ranked = [...fused.values()].map(({ c, rrf }) => ({ c, score: (rrf / best) * quality(c, now) })).sort((a, b) => b.score - a.score);
  const seen = new Set<string>();
  const results: SearchHit[] = [];
  for (const { c, score } of ranked) {
    const key = normalizeText(c.text).toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    results.push({ id: c.id, text: c.text, score: Math.round(score * 1e4) / 1e4, metadata: JSON.parse(c.metadata) as JsonObject, confidence: c.confidence });
    if (results.length >= input.k) break;
  }
  return { results, degraded, embeddingTokens: vector.tokens };
}

/** Injected facts were recalled: they rank up, and stop decaying, from now on. Records the query's embedding cost. */
export async function recordRecall(deps: MemoryDeps, userId: string, ids: readonly string[], embeddingTokens: number): Promise<void> {
  await runStatements(deps.db, [
    ...(ids.length ? [sql`UPDATE facts SET recall_count = recall_count + 1, last_recalled_at = ${deps.now()} WHERE user_id = ${userId} AND ${inJson(facts.id, [...ids])}`] : []),
    ...(embeddingTokens ? [deps.db.insert(usage).values({ id: newId("use"), userId, kind: "embedding", model: deps.embedder.model, inputTokens: embeddingTokens, outputTokens: 0 })] : []),
  ]);
}
