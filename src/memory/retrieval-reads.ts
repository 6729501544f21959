/**
 * The reads of fact search: the candidate lists ranking.ts orders. Full text ranks by FTS5 BM25 inside the
 * user's partition; the vector half by cosine similarity. Every read is filtered to user_id = me AND
 * (connection_id IN active OR NULL). They depend only on the query and the user, so they all go to D1 as
 * one batch: the full-text reads at once, the vector read once the query is embedded (and a remote index
 * has answered), its matches hydrated by a subquery in the same statement. In a chat turn that batch is
 * the turn's own context read. Read-your-writes: full text reads D1 directly, and the vector index is D1
 * too (locally) or has a D1 overlay of recent writes (Vectorize).
 */
import { type SQL, sql } from "drizzle-orm";
import type { BatchedRead, BatchReads } from "../core/context";
import type { Db } from "../db/client";
import { ownerTag, uncommonTerms } from "../db/fts-tag";
import { literalLimit } from "../db/limit";
import type { MemoryDeps } from "./deps";
import { indexForm, type SearchPlan } from "./ranking";
import type { Candidates, Scored, SearchInput, VectorCandidate } from "./search-types";
import { stem, words } from "./text";

const CANDIDATES = 100;

const columns = sql`f.id, f.rowid, f.text, f.metadata, f.confidence, f.recall_count, f.last_recalled_at, f.created_at, f.event_at, f.superseded_by`;

const connectionsOf = (input: SearchInput): SQL =>
  input.connectionIds === "active"
    ? sql`SELECT id FROM connections WHERE user_id = ${input.userId} AND active = 1`
    : sql`SELECT value FROM json_each(${JSON.stringify(input.connectionIds)})`;

function scoped(input: SearchInput): SQL {
  const parts = [sql`f.user_id = ${input.userId}`, sql`(f.connection_id IS NULL OR f.connection_id IN (${connectionsOf(input)}))`];
  if (!input.history) parts.push(sql`f.superseded_by IS NULL`);
  if (input.projectId !== undefined) parts.push(input.projectId ? sql`(f.project_id IS NULL OR f.project_id = ${input.projectId})` : sql`f.project_id IS NULL`);
  if (input.after !== undefined) parts.push(sql`coalesce(f.event_at, f.created_at) >= ${input.after}`);
  if (input.before !== undefined) parts.push(sql`coalesce(f.event_at, f.created_at) < ${input.before}`);
  return sql.join(parts, sql` AND `);
}

const CANDIDATE_KEYS = ["id", "rowid", "text", "metadata", "confidence", "recall_count", "last_recalled_at", "created_at", "event_at", "superseded_by"];

/** A raw read as a drizzle select over it: drizzle's batch takes no raw statement with parameters. */
const rowsOf = (db: Db, query: SQL, keys: readonly string[]) =>
  db.select(Object.fromEntries(keys.map((k) => [k, sql`${sql.identifier(k)}`]))).from(sql`(${query})`);
type Statement = ReturnType<typeof rowsOf>;

/**
 * `cap(n, cap)`: how many facts the user has, and the document frequency over which a word is common for them
 * (`commonLimit` in ranking.ts, the same rule).
 */
const commonCap = ({ input, tuning }: SearchPlan) =>
  sql`n AS (SELECT count(*) AS n FROM facts WHERE user_id = ${input.userId}),
    cap AS (SELECT n, max(${tuning.commonFloor}, CAST(n * ${tuning.commonShare} AS INTEGER)) AS cap FROM n)`;

/**
 * The full-text list: FTS5's BM25 over the query's words in the user's own postings (`facts_fts` stores every
 * word tagged with its owner: src/db/fts-tag.ts), ranked inside that partition first, then scoped and hydrated.
 *
 * A word found in more than `commonShare` of the user's facts (and in more than `commonFloor` of them) is left
 * out of the query, unless no word of the query is both in the user's facts and below that share: it is what a
 * stop list would drop, measured on the user's own facts in whatever language they write, and it would otherwise
 * make FTS5 score most of the user's facts. Why here and
 * not in BM25 alone: FTS5 counts its rows over the whole table, so a word's IDF is measured against every user's
 * facts and a word common in this user's facts still weighs as if it were rare.
 *
 * `bm25(facts_fts)` ordered through SQLite's own sorter measured a third cheaper than FTS5's `ORDER BY rank`
 * path, which re-reads every row it returns. CROSS JOIN keeps the ranked rows outside: left to itself the planner
 * walks the user's whole partition on facts_user and probes them. A time filter or history drops many of the
 * best-ranked rows, so it reads deeper.
 */
function fullText(db: Db, plan: SearchPlan): Statement | null {
  const { input, tuning } = plan;
  if (!plan.terms.length) return null;
  const filtered = input.after !== undefined || input.before !== undefined || input.history;
  const depth = literalLimit(filtered ? tuning.depth * 5 : tuning.depth);
  const query = sql`WITH tag AS (SELECT ${ownerTag(input.userId)} AS tag), ${commonCap(plan)}, ${uncommonTerms("facts_fts", plan.terms)}
    SELECT ${columns}, -h.bm25 AS lexical
    FROM (SELECT rowid, bm25(facts_fts) AS bm25 FROM facts_fts WHERE facts_fts MATCH (SELECT q FROM m) ORDER BY bm25 LIMIT ${depth}) h
    CROSS JOIN facts f ON f.rowid = h.rowid WHERE ${scoped(input)} ORDER BY h.bm25 LIMIT ${literalLimit(Math.max(CANDIDATES, input.k * 2))}`;
  return rowsOf(db, query, [...CANDIDATE_KEYS, "lexical"]);
}

/**
 * How many of this user's own facts contain each word (the postings of the word under the user's tag), and, as the
 * row with an empty term, how many facts the user has: BM25's statistics measured on the user's facts, not the
 * whole table's. Counting stops one past the common-word limit: a word that common is not scored at all. Words are
 * letters and digits only (see `words`), so quoting them needs no escaping.
 */
function docFrequency(db: Db, plan: SearchPlan) {
  const { userId } = plan.input;
  return rowsOf(
    db,
    sql`WITH ${commonCap(plan)} SELECT value AS term,
      (SELECT count(*) FROM (SELECT 1 FROM facts_fts WHERE facts_fts MATCH '"' || ${ownerTag(userId)} || value || '"'
      LIMIT (SELECT cap + 1 FROM cap))) AS doc FROM json_each(${JSON.stringify([...plan.stems.values()])})
      UNION ALL SELECT '' AS term, (SELECT n FROM cap) AS doc`,
    ["term", "doc"],
  );
}

type Lexical = Pick<Candidates, "text" | "docFrequency" | "facts"> & { docFrequency: Map<string, number> };

/**
 * Whether a hit contains one of the query's words as an untagged index would see them (lower case, no
 * diacritics, porter stems; words under three letters unstemmed). Tagged, every indexed word is longer than
 * three letters, so porter stems short words too: "is" is indexed as "i", "as" as "a", and without this check a
 * question's "I" would find a fact for its "is" alone.
 */
function sharesWord(terms: readonly string[]): (text: string) => boolean {
  const forms = (text: string) => words(text.normalize("NFD").replace(/\p{M}/gu, "")).map((w) => (w.length < 3 ? w : stem(w)));
  const wanted = new Set(forms(terms.join(" ")));
  return (text) => forms(text).some((f) => wanted.has(f));
}

/** The full-text reads: they need nothing but the plan. Null when the plan calls for none. */
function lexicalReads(db: Db, plan: SearchPlan): { queries: BatchReads; decode(results: readonly unknown[]): Lexical } | null {
  const named: [keyof Lexical, Statement][] = [];
  const list = plan.mode === "vector" ? null : fullText(db, plan);
  if (list) named.push(["text", list]);
  if (plan.stems.size) named.push(["docFrequency", docFrequency(db, plan)]);
  const [first, ...rest] = named.map(([, q]) => q);
  if (!first) return null;
  const found = sharesWord(plan.terms);
  return {
    queries: [first, ...rest],
    decode(results) {
      const out: Lexical = { text: [], docFrequency: new Map(), facts: 0 };
      named.forEach(([name], i) => {
        const rows = (results[i] ?? []) as unknown[];
        if (name === "docFrequency") {
          for (const r of rows as { term: string; doc: number }[]) {
            if (r.term) out.docFrequency.set(indexForm(r.term), r.doc);
            else out.facts = r.doc;
          }
        } else out.text = (rows as Scored[]).filter((row) => found(row.text));
      });
      return out;
    },
  };
}

/** The vector read, once the query is embedded: the index's matches over the noise floor, hydrated and scoped. */
async function vectorRead(deps: MemoryDeps, input: SearchInput): Promise<{ tokens: number; query: Statement | null }> {
  const { vectors, tokens } = await deps.embedder.embed([input.query]);
  const [vector] = vectors;
  if (!vector) return { tokens, query: null };
  const matches = await deps.vectors.matchesQuery(input.userId, vector, CANDIDATES);
  return {
    tokens,
    query: rowsOf(
      deps.db,
      sql`SELECT ${columns}, m.score AS cosine FROM (${matches}) m CROSS JOIN facts f ON f.id = m.id
        WHERE m.score >= ${deps.embedder.minScore} AND ${scoped(input)} ORDER BY m.score DESC`,
      [...CANDIDATE_KEYS, "cosine"],
    ),
  };
}

/** The root cause in one short line: audit rows and API answers carry no query text. */
export function briefError(err: unknown): string {
  const root = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return (root instanceof Error ? root.message : String(root)).split("\n")[0]?.slice(0, 200) ?? "unknown error";
}

/**
 * Every candidate list the plan calls for, read through `read` (the caller flushes it: its reads are
 * queued before this returns its promise). A vector half that fails degrades the search, it does not fail it.
 */
export async function readCandidates(deps: MemoryDeps, plan: SearchPlan, read: BatchedRead): Promise<Candidates> {
  const lexical = lexicalReads(deps.db, plan);
  const lexicalRows = lexical ? read(lexical.queries) : null;
  let tokens = 0;
  const prepared =
    plan.mode === "fulltext"
      ? null
      : vectorRead(deps, plan.input).then(({ tokens: t, query }) => {
          tokens = t;
          return query ? ([query] as const) : null;
        });
  const vectorRows = prepared ? read(prepared) : null;
  let degraded: string | null = null;
  const [lists, vector] = await Promise.all([
    lexicalRows && lexical ? lexicalRows.then((r) => lexical.decode(r)) : null,
    vectorRows?.then(
      (r) => (r?.[0] ?? []) as VectorCandidate[],
      (err: unknown) => {
        degraded = `vector search unavailable: ${briefError(err)}`;
        return [];
      },
    ) ?? [],
  ]);
  return {
    ...(lists ?? { text: [], docFrequency: new Map(), facts: 0 }),
    vector,
    embeddingTokens: tokens,
    degraded,
  };
}
