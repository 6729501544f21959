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
import { ownerTag, userMatch } from "../db/fts-tag";
import { literalLimit } from "../db/limit";
import type { MemoryDeps } from "./deps";
import type { SearchPlan } from "./ranking";
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
 * The MATCH for any of the words in the user's own postings (`facts_fts` stores every word tagged with its
 * owner: src/db/fts-tag.ts); null for no words. Quoted: a word is never an FTS5 operator.
 */
const ftsMatch = (input: SearchInput, words: readonly string[]): SQL | null => (words.length ? userMatch(input.userId, words) : null);

/** A full-text candidate list; `match` is the FTS5 query, bound as a value or an expression that yields one. */
function fullText(input: SearchInput, match: string | SQL): SQL {
  // Ranked inside the user's partition first, then scoped and hydrated. A time filter drops many of the
  // best-ranked rows, so it reads deeper. `bm25(facts_fts)` is the table's rank: ordering by it through
  // SQLite's own sorter measured a third cheaper than FTS5's `ORDER BY rank` path,
  // which re-reads every row it returns; same scores, same order. CROSS JOIN keeps the ranked rows outside:
  // left to itself the planner walks the user's whole partition on facts_user and probes them.
  const depth = input.after !== undefined || input.before !== undefined || input.history ? CANDIDATES * 20 : CANDIDATES * 4;
  return sql`SELECT ${columns}, -h.bm25 AS lexical FROM (SELECT rowid, bm25(facts_fts) AS bm25 FROM facts_fts WHERE facts_fts MATCH ${match} ORDER BY bm25 LIMIT ${literalLimit(depth)}) h
    CROSS JOIN facts f ON f.rowid = h.rowid WHERE ${scoped(input)} ORDER BY h.bm25 LIMIT ${literalLimit(Math.max(CANDIDATES, input.k * 2))}`;
}

/** The filler MATCH when the filler is not needed: one index lookup (ranking ignores the list then anyway). */
const NO_MATCH = '"engramnofillerneeded"';

type ListName = "text" | "expanded" | "filler";

/**
 * Every full-text list as one statement, rows tagged with their list. Ranking uses the filler list (every
 * query word, function words too: they match nearly every fact, so it is the costliest scan) only when the
 * content-word lists found fewer than k facts (`needsFiller`). Here those lists are computed once
 * (materialized) and counted, and the filler list's MATCH is a token that matches nothing unless it is
 * needed: the same lists ranking would use, without paying for the filler scan when it would be ignored.
 */
function fullTextLists(db: Db, plan: SearchPlan): Statement | null {
  const { input } = plan;
  const text = ftsMatch(input, plan.terms);
  const expanded = ftsMatch(input, plan.extra);
  const filler = plan.everyWord.length > plan.terms.length ? ftsMatch(input, plan.everyWord) : null;
  const lists: [ListName, SQL][] = [];
  if (text) lists.push(["text", fullText(input, text)]);
  if (expanded) lists.push(["expanded", fullText(input, expanded)]);
  if (!lists.length && !filler) return null;
  const ctes = lists.map(([name, q]) => sql`${sql.identifier(`l_${name}`)} AS MATERIALIZED (${q})`);
  const arms = lists.map(([name]) => sql`SELECT ${name} AS list, * FROM ${sql.identifier(`l_${name}`)}`);
  if (filler) {
    const found = sql.join(
      lists.map(([name]) => sql`SELECT id FROM ${sql.identifier(`l_${name}`)}`),
      sql` UNION `,
    );
    const match = lists.length ? sql`CASE WHEN (SELECT count(*) FROM (${found})) < ${input.k} THEN ${filler} ELSE ${NO_MATCH} END` : filler;
    arms.push(sql`SELECT ${"filler"} AS list, * FROM (${fullText(input, match)})`);
  }
  const query = ctes.length ? sql`WITH ${sql.join(ctes, sql`, `)} ${sql.join(arms, sql` UNION ALL `)}` : sql.join(arms, sql` UNION ALL `);
  return rowsOf(db, query, ["list", ...CANDIDATE_KEYS, "lexical"]);
}

/**
 * The statements of the user's attribute a question asks about ("Where am I based these days?" -> where the
 * user lives), newest first: the current one even when it shares no word with the question, and with `history`
 * the ones it replaced. One range read on the (user_id, slot) index.
 */
function slotFacts(db: Db, input: SearchInput, slot: string, fallback: string | null) {
  // The fallback slot when the user has no fact of the asked one: one more probe of the same index.
  const which = fallback
    ? sql`(CASE WHEN EXISTS (SELECT 1 FROM facts WHERE user_id = ${input.userId} AND slot = ${slot}) THEN ${slot} ELSE ${fallback} END)`
    : sql`${slot}`;
  return rowsOf(
    db,
    sql`SELECT ${columns}, f.slot FROM facts f WHERE f.slot = ${which} AND ${scoped(input)} ORDER BY coalesce(f.event_at, f.created_at) DESC LIMIT 10`,
    [...CANDIDATE_KEYS, "slot"],
  );
}

/** Document frequencies above this count as this: rarity barely changes past it, and counting stops there. */
const DF_CAP = 200;

/**
 * How many of this user's own facts contain each word: the postings of the word tagged with the user's tag.
 * Words are letters and digits only (see `words`), so quoting them needs no escaping.
 */
function docFrequency(db: Db, userId: string, plan: SearchPlan) {
  return rowsOf(
    db,
    sql`SELECT value AS term, (SELECT count(*) FROM (SELECT 1 FROM facts_fts WHERE facts_fts MATCH '"' || ${ownerTag(userId)} || value || '"' LIMIT ${literalLimit(DF_CAP)})) AS doc
      FROM json_each(${JSON.stringify([...plan.stems.values()])})`,
    ["term", "doc"],
  );
}

type Lexical = Pick<Candidates, "text" | "expanded" | "filler" | "slotted" | "docFrequency">;

/**
 * Whether a fill hit contains one of the question's words as an untagged index would see them (lower case, no
 * diacritics, porter stems; words under three letters unstemmed). Tagged, every indexed word is longer than
 * three letters, so porter stems short words too: "is" is indexed as "i", "as" as "a". The fill list matches
 * function words, and without this check the question's "I" would bring back every fact that says "is".
 */
function sharesWord(everyWord: readonly string[]): (text: string) => boolean {
  const forms = (text: string) => words(text.normalize("NFD").replace(/\p{M}/gu, "")).map(stem);
  const wanted = new Set(forms(everyWord.join(" ")));
  return (text) => forms(text).some((f) => wanted.has(f));
}

/** The full-text reads: they need nothing but the plan. Null when the plan calls for none. */
function lexicalReads(db: Db, plan: SearchPlan): { queries: BatchReads; decode(results: readonly unknown[]): Lexical } | null {
  const { input, mode } = plan;
  const named: [keyof Lexical, Statement][] = [];
  const lists = mode === "vector" ? null : fullTextLists(db, plan);
  if (lists) named.push(["text", lists]);
  if (plan.slot) named.push(["slotted", slotFacts(db, input, plan.slot, plan.slotFallback)]);
  if (plan.stems.size) named.push(["docFrequency", docFrequency(db, input.userId, plan)]);
  const [first, ...rest] = named.map(([, q]) => q);
  if (!first) return null;
  const fills = sharesWord(plan.everyWord);
  return {
    queries: [first, ...rest],
    decode(results) {
      const out: Lexical = { text: [], expanded: [], filler: [], slotted: [], docFrequency: new Map() };
      named.forEach(([name, _], i) => {
        const rows = (results[i] ?? []) as unknown[];
        if (name === "docFrequency") out.docFrequency = new Map((rows as { term: string; doc: number }[]).map((r) => [stem(r.term), r.doc]));
        else if (name === "slotted") out.slotted = rows as Candidates["slotted"];
        else for (const { list, ...row } of rows as (Scored & { list: ListName })[]) if (list !== "filler" || fills(row.text)) out[list].push(row);
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
    ...(lists ?? { text: [], expanded: [], filler: [], slotted: [], docFrequency: new Map() }),
    vector,
    embeddingTokens: tokens,
    degraded,
  };
}
