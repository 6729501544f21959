/**
 * Hybrid retrieval. The full-text half ranks by FTS5 BM25 inside the user's partition; the vector half by
 * cosine similarity. They are fused by score, not by rank: BM25 scaled by the best BM25 of the query, plus the
 * cosine times the embedder's weight (a weak local embedder moves close calls, it cannot bury a strong lexical
 * match; a vector list under the embedder's noise floor is dropped). Confidence and reinforcement reorder
 * near-ties only. Time: each fact has an event time (when it happened or was said); a query that names a
 * period prefers facts from it, one that asks about the present prefers the latest statements, and callers may
 * filter (`after`/`before`) or order by time, and include superseded history.
 * Both halves are filtered to user_id = me AND (connection_id IN active OR NULL).
 * Read-your-writes: the full-text half reads D1 directly, and the vector half's index is D1 too (locally) or
 * has a D1 overlay of recent writes (Vectorize).
 */
import { type SQL, sql } from "drizzle-orm";
import { runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { facts, type JsonObject, usage } from "../db/schema";
import type { MemoryDeps } from "./deps";
import { expandTerms, relatedStems } from "./expand";
import { type Neighbour, neighboursOf } from "./neighbours";
import { questionSlot } from "./slots";
import { isStopword, normalizeText, stem, words } from "./text";
import { inJson } from "./vector";
import { type TimeRange, timeCues } from "./when";

export type SearchMode = "hybrid" | "fulltext" | "vector";
export type SearchOrder = "relevance" | "newest" | "oldest";
export type SearchInput = {
  userId: string;
  query: string;
  k: number;
  connectionIds: readonly string[];
  mode?: SearchMode;
  /** Only facts whose event time is at or after / before these (epoch ms). */
  after?: number;
  before?: number;
  order?: SearchOrder;
  /** Superseded statements too (the history of a changing fact), marked by `supersededBy`. */
  history?: boolean;
  /** Attach the turns just before and after each hit in its session (`metadata.session_id`). */
  neighbours?: boolean;
  /**
   * A chat turn's project: that project's facts plus user-level ones (null: user-level only), never
   * another project's. Undefined: every fact of the user's (the API's own search, consolidation).
   */
  projectId?: string | null;
};
export type SearchHit = {
  id: string;
  text: string;
  score: number;
  /** How much of the query's information (rarity-weighted words) the hit contains, 0..1; see `weak`. */
  match: number;
  eventAt: number;
  supersededBy: string | null;
  metadata: JsonObject;
  confidence: number;
  neighbours?: Neighbour[];
};
export type SearchResult = {
  results: SearchHit[];
  degraded: string | null;
  embeddingTokens: number;
  /** The period read from the query, if any, and whether it asked about the present. */
  when: TimeRange | null;
  current: boolean;
  /** True when even the best hit matches little of the query: likely nothing relevant is stored. */
  weak: boolean;
};

export type Candidate = {
  id: string;
  rowid: number;
  text: string;
  metadata: string;
  confidence: number;
  recall_count: number;
  last_recalled_at: number | null;
  created_at: number;
  event_at: number | null;
  superseded_by: string | null;
};

const CANDIDATES = 100;
const HALF_LIFE_DAYS = 90;
/** Under this match the best hit is reported as weak (chosen on the recall evaluation's abstention questions). */
export const WEAK_MATCH = 0.45;

/** Content words of a query, as typed (FTS5's porter tokenizer stems them). */
export function queryTerms(text: string): string[] {
  return [...new Set(words(text).filter((w) => !isStopword(w) && (w.length > 1 || /\d/.test(w))))].slice(0, 32);
}

/** An FTS5 query matching any content word of the text (quoted: no operator injection). */
export function ftsQuery(text: string): string | null {
  const terms = queryTerms(text);
  return terms.length ? terms.map((t) => `"${t}"`).join(" OR ") : null;
}

const columns = sql`f.id, f.rowid, f.text, f.metadata, f.confidence, f.recall_count, f.last_recalled_at, f.created_at, f.event_at, f.superseded_by`;

function scoped(input: SearchInput): SQL {
  const parts = [
    sql`f.user_id = ${input.userId}`,
    sql`(f.connection_id IS NULL OR f.connection_id IN (SELECT value FROM json_each(${JSON.stringify(input.connectionIds)})))`,
  ];
  if (!input.history) parts.push(sql`f.superseded_by IS NULL`);
  if (input.projectId !== undefined) parts.push(input.projectId ? sql`(f.project_id IS NULL OR f.project_id = ${input.projectId})` : sql`f.project_id IS NULL`);
  if (input.after !== undefined) parts.push(sql`coalesce(f.event_at, f.created_at) >= ${input.after}`);
  if (input.before !== undefined) parts.push(sql`coalesce(f.event_at, f.created_at) < ${input.before}`);
  return sql.join(parts, sql` AND `);
}

/** The user's partition of `facts_fts` (see migration 0005): `facts.owner` is the user id without underscores. */
const ownerToken = (userId: string) => `"${userId.replace(/_/g, "").replace(/"/g, '""')}"`;

type Scored = Candidate & { lexical: number };

function fullText(db: Db, input: SearchInput, terms: string | null): Promise<Scored[]> {
  if (!terms) return Promise.resolve([]);
  const match = `owner : ${ownerToken(input.userId)} AND text : (${terms})`;
  // Ranked inside FTS5 first (its ORDER BY rank LIMIT fast path), then scoped and hydrated. A time filter
  // drops many of the best-ranked rows, so it reads deeper.
  const depth = input.after !== undefined || input.before !== undefined || input.history ? CANDIDATES * 20 : CANDIDATES * 4;
  return db.all<Scored>(sql`SELECT ${columns}, -h.rank AS lexical FROM (SELECT rowid, rank FROM facts_fts WHERE facts_fts MATCH ${match} ORDER BY rank LIMIT ${depth}) h
    JOIN facts f ON f.rowid = h.rowid WHERE ${scoped(input)} ORDER BY h.rank LIMIT ${Math.max(CANDIDATES, input.k * 2)}`);
}

async function vectorSearch(deps: MemoryDeps, input: SearchInput): Promise<{ hits: (Candidate & { cosine: number })[]; tokens: number }> {
  const { vectors, tokens } = await deps.embedder.embed([input.query]);
  const [vector] = vectors;
  if (!vector) return { hits: [], tokens };
  const matches = (await deps.vectors.query(input.userId, vector, CANDIDATES)).filter((m) => m.score >= deps.embedder.minScore);
  if (!matches.length) return { hits: [], tokens };
  const rows = await deps.db.all<Candidate>(
    sql`SELECT ${columns} FROM facts f WHERE ${inJson(
      sql`f.id`,
      matches.map((m) => m.id),
    )} AND ${scoped(input)}`,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return {
    hits: matches.flatMap((m) => {
      const c = byId.get(m.id);
      return c ? [{ ...c, cosine: m.score }] : [];
    }),
    tokens,
  };
}

/**
 * The statements of the user's attribute a question asks about ("Where am I based these days?" -> where the
 * user lives), newest first: the current one even when it shares no word with the question, and with `history`
 * the ones it replaced. One range read on the (user_id, slot) index.
 */
function slotFacts(db: Db, input: SearchInput, slot: string): Promise<Candidate[]> {
  return db.all<Candidate>(
    sql`SELECT ${columns} FROM facts f WHERE f.slot = ${slot} AND ${scoped(input)} ORDER BY coalesce(f.event_at, f.created_at) DESC LIMIT 10`,
  );
}

/** Document frequencies above this count as this: rarity barely changes past it, and counting stops there. */
const DF_CAP = 200;

/**
 * Rarity of each query word in this user's own facts (their partition of the full-text index; other users'
 * facts never weigh in), as an inverse-frequency weight for the match signal: `1 / ln(e + df)`.
 */
async function termWeights(db: Db, userId: string, terms: readonly string[]): Promise<Map<string, number>> {
  const byStem = new Map<string, string>();
  for (const t of terms) if (!byStem.has(stem(t))) byStem.set(stem(t), t);
  if (!byStem.size) return new Map();
  const owner = ownerToken(userId);
  // Words are letters and digits only (see `words`), so quoting them needs no escaping.
  const rows = await db.all<{ term: string; doc: number }>(
    sql`SELECT value AS term, (SELECT count(*) FROM (SELECT 1 FROM facts_fts WHERE facts_fts MATCH ${`owner : ${owner} AND text : "`} || value || '"' LIMIT ${DF_CAP})) AS doc
      FROM json_each(${JSON.stringify([...byStem.values()])})`,
  );
  const df = new Map(rows.map((r) => [stem(r.term), r.doc]));
  return new Map([...byStem.keys()].map((s) => [s, 1 / Math.log(Math.E + (df.get(s) ?? 0))]));
}

/**
 * Share of the query's rarity-weighted words present in the text; a word absent but for a related word (a
 * near-synonym or irregular form from the expansion lists) counts half.
 */
export function matchOf(weights: ReadonlyMap<string, number>, text: string, related: ReadonlyMap<string, readonly string[]> = new Map()): number {
  let total = 0;
  for (const w of weights.values()) total += w;
  if (!total) return 0;
  const present = new Set(words(text).map(stem));
  let got = 0;
  for (const [term, w] of weights) {
    if (present.has(term)) got += w;
    else if (related.get(term)?.some((x) => present.has(x))) got += w / 2;
  }
  return got / total;
}

/** The root cause in one short line: audit rows and API answers carry no query text. */
export function briefError(err: unknown): string {
  const root = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return (root instanceof Error ? root.message : String(root)).split("\n")[0]?.slice(0, 200) ?? "unknown error";
}

/** Confidence, reinforcement and decay: a multiplier around 1. */
export function quality(c: Pick<Candidate, "confidence" | "recall_count" | "last_recalled_at" | "created_at">, now: number): number {
  const touched = Math.max(c.created_at, c.last_recalled_at ?? 0);
  const ageDays = Math.max(0, now - touched) / 86_400_000;
  const freshness = 0.6 + 0.4 * 2 ** (-ageDays / HALF_LIFE_DAYS);
  return (0.6 + 0.4 * c.confidence) * (1 + 0.15 * Math.log1p(c.recall_count)) * freshness;
}

/** Quality may reorder near-ties only: +-5% at most, so a fact restated often never outranks a better match. */
const tieBreak = (q: number) => 1 + 0.05 * Math.max(-1, Math.min(1, (q - 0.9) / 0.3));

const EXPANDED_WEIGHT = 0.5;
const FILLER_WEIGHT = 0.15;
const PERIOD_BOOST = 1.6;
const OUT_OF_PERIOD = 0.6;
const RECENCY_BOOST = 1.0;
const SLOT_WEIGHT = 1.0;
const CHANGE_BOOST = 1.5;
const CHANGE =
  /\b(?:switched|switching|swapped|changed|upgraded|replaced|instead|no longer|not anymore|quit|gave up|dropped|ditched|transferred|moved over|nowadays|these days|the old one)\b/i;

export async function searchFacts(deps: MemoryDeps, request: SearchInput): Promise<SearchResult> {
  const mode = request.mode ?? "hybrid";
  const now = deps.now();
  const cues = timeCues(request.query, now);
  // "Where did I live before?": what was replaced is what the question is about.
  const input = cues.past ? { ...request, history: true } : request;
  const slot = mode === "vector" ? null : questionSlot(input.query);
  let degraded: string | null = null;
  const terms = queryTerms(input.query);
  const extra = expandTerms(terms);
  const quoted = (ws: readonly string[]) => (ws.length ? ws.map((t) => `"${t}"`).join(" OR ") : null);
  const [text, expanded, vector, weights, slotted] = await Promise.all([
    mode === "vector" ? [] : fullText(deps.db, input, ftsQuery(input.query)),
    mode === "vector" ? [] : fullText(deps.db, input, quoted(extra)),
    mode === "fulltext"
      ? { hits: [], tokens: 0 }
      : vectorSearch(deps, input).catch((err: unknown) => {
          degraded = `vector search unavailable: ${briefError(err)}`;
          return { hits: [], tokens: 0 };
        }),
    termWeights(deps.db, input.userId, terms),
    slot ? slotFacts(deps.db, input, slot) : [],
  ]);

  // Too few matches for k: the query's function words too, as BM25 over every word would, at a low weight.
  const found = new Set([...text, ...expanded].map((c) => c.id));
  const everyWord = [...new Set(words(input.query))].slice(0, 32);
  const filler = mode !== "vector" && found.size < input.k && everyWord.length > terms.length ? await fullText(deps.db, input, quoted(everyWord)) : [];

  const vectorWeight = mode === "vector" ? 1 : (deps.embedder.fusionWeight ?? 0.5);
  const fused = new Map<string, { c: Candidate; relevance: number }>();
  const addList = (list: Scored[], weight: number) => {
    const best = Math.max(0, ...list.map((c) => c.lexical));
    for (const c of list) {
      const entry = fused.get(c.id) ?? { c, relevance: 0 };
      entry.relevance += best > 0 ? (weight * c.lexical) / best : 0;
      fused.set(c.id, entry);
    }
  };
  addList(text, 1);
  addList(expanded, EXPANDED_WEIGHT);
  addList(filler, FILLER_WEIGHT);
  // The attribute's current statement (or, asked about the past, the ones it replaced) counts as a full match.
  for (const c of slotted) {
    const entry = fused.get(c.id) ?? { c, relevance: 0 };
    entry.relevance += (c.superseded_by === null) === !cues.past ? SLOT_WEIGHT : SLOT_WEIGHT / 4;
    fused.set(c.id, entry);
  }
  for (const c of vector.hits) {
    const entry = fused.get(c.id) ?? { c, relevance: 0 };
    // Only the similarity above the embedder's noise floor is evidence; in vector-only mode the raw cosine ranks.
    entry.relevance += mode === "vector" ? c.cosine : vectorWeight * Math.max(0, (c.cosine - deps.embedder.minScore) / (1 - deps.embedder.minScore));
    fused.set(c.id, entry);
  }

  const eventOf = (c: Candidate) => c.event_at ?? c.created_at;
  const times = [...fused.values()].map(({ c }) => eventOf(c));
  const [oldest, newest] = [Math.min(...times), Math.max(...times)];
  const period = input.after === undefined && input.before === undefined ? cues.range : null;
  const ranked = [...fused.values()]
    .map(({ c, relevance }) => {
      let score = relevance * tieBreak(quality(c, now));
      const at = eventOf(c);
      if (period) score *= at >= period.from && at < period.to ? PERIOD_BOOST : OUT_OF_PERIOD;
      if (cues.current && newest > oldest) score *= 1 + RECENCY_BOOST * ((at - oldest) / (newest - oldest));
      // A statement that announces a change ("switched to", "instead", "no longer") is the newer state of its topic.
      if (cues.current && CHANGE.test(c.text)) score *= CHANGE_BOOST;
      // History ranks under what is current; asked about the past, the other way round.
      if ((c.superseded_by !== null) !== cues.past) score *= 0.5;
      return { c, score };
    })
    .sort((a, b) => b.score - a.score || eventOf(b.c) - eventOf(a.c));

  const seen = new Set<string>();
  const chosen: { c: Candidate; score: number }[] = [];
  for (const entry of ranked) {
    const key = normalizeText(entry.c.text).toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    chosen.push(entry);
    if (chosen.length >= input.k) break;
  }
  if (input.order === "newest") chosen.sort((a, b) => eventOf(b.c) - eventOf(a.c));
  if (input.order === "oldest") chosen.sort((a, b) => eventOf(a.c) - eventOf(b.c));
  const related = new Map(terms.map((t) => [stem(t), relatedStems(t)]));
  const results: SearchHit[] = chosen.map(({ c, score }) => ({
    id: c.id,
    text: c.text,
    score: Math.round(score * 1e4) / 1e4,
    match: Math.round(matchOf(weights, c.text, related) * 1e4) / 1e4,
    eventAt: eventOf(c),
    supersededBy: c.superseded_by,
    metadata: JSON.parse(c.metadata) as JsonObject,
    confidence: c.confidence,
  }));
  if (input.neighbours && results.length) {
    const around = await neighboursOf(
      deps.db,
      input.userId,
      chosen.map((x) => x.c),
    );
    for (const r of results) r.neighbours = around.get(r.id) ?? [];
  }
  const best = Math.max(0, ...results.map((r) => r.match));
  return { results, degraded, embeddingTokens: vector.tokens, when: cues.range, current: cues.current, weak: best < WEAK_MATCH };
}

/** Injected facts were recalled: they rank up, and stop decaying, from now on. Records the query's embedding cost. */
export async function recordRecall(deps: MemoryDeps, userId: string, ids: readonly string[], embeddingTokens: number): Promise<void> {
  await runStatements(deps.db, [
    ...(ids.length
      ? [sql`UPDATE facts SET recall_count = recall_count + 1, last_recalled_at = ${deps.now()} WHERE user_id = ${userId} AND ${inJson(facts.id, [...ids])}`]
      : []),
    ...(embeddingTokens
      ? [
          deps.db
            .insert(usage)
            .values({ id: newId("use"), userId, kind: "embedding", model: deps.embedder.model, inputTokens: embeddingTokens, outputTokens: 0 }),
        ]
      : []),
  ]);
}
