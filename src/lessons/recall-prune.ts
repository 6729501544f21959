/**
 * Exact pruning of the recall's BM25 pass (MaxScore-style): the same best `depth` matches, in the same order and
 * with the same scores to the bit, while scoring fewer of them. Measured not faster in workerd and therefore off
 * by default (docs/lessons.md, "Exact pruning, again"); kept so the A/B (bench/lessons-prune-ab-*) can be re-run.
 *
 * Why it is exact. bm25() gives a lesson, for each query word it holds, idf x f(k1 + 1) / (f + k1 x norm) with
 * k1 = 1.2: strictly less than idf x 2.2, whatever the word's frequency and the lesson's length. A word's idf,
 * log((N - hits + 0.5) / (hits + 0.5)), grows with N, FTS5's row count, which the largest rowid of `lessons`
 * bounds; `hits` (the lessons holding the tagged word) is counted exactly. So a lesson holding one query word
 * scores under that word's bound. The lessons holding two or more query words are scored first; if there are
 * enough of them, their `depth`-th best score is a floor the true `depth`-th best cannot be under. Lessons holding
 * a single word whose bound is under the floor cannot enter the best `depth` and are not scored; those holding a
 * single word whose bound reaches it are scored too, apart ("more"), or, when they are many, every match is
 * ("whole", which is also the path when the words are not all common or too few lessons hold two of them).
 * Every score is bm25() over the full query (a filter only decides which rows it runs on), so scores are the
 * unpruned ones; ties are broken by rowid, as in the unpruned statement (FTS5 yields matches by ascending rowid
 * and SQLite's sorter keeps the first of equal keys). test/lessons-recall-prune.test.ts compares the two.
 *
 * The statement's text depends only on `depth` (written in): the words go in bound, as the "any word" MATCH,
 * a "two of the words" MATCH and a JSON list of single-word MATCHes; the user's tag is computed once.
 */
import { type SQL, sql } from "drizzle-orm";
import { anyTagged, ownerTag, quoted } from "../db/fts-tag";
import { literalLimit } from "../db/limit";

/**
 * Up to this many words the "two of the words" MATCH (n(n-1)/2 pairs) is worth building; a longer query (a pasted
 * error) is scored unpruned.
 */
export const PRUNE_MAX_TERMS = 5;

/** "(a b) OR (a c) OR (b c)": the lessons holding two or more of the words (tagged, `@` for the user's tag). */
export function pairsTagged(terms: readonly string[]): string {
  const out: string[] = [];
  for (let i = 0; i < terms.length; i++) {
    for (let j = i + 1; j < terms.length; j++) out.push(`(${quoted(`@${terms[i]}`)} ${quoted(`@${terms[j]}`)})`);
  }
  return out.join(" OR ");
}

/**
 * Pruning is tried only when each word is held by at least this many of the user's lessons (counted up to it): a
 * rarer word's bound is above any floor two words give, and such a query has few matches to save anyway.
 */
const COMMON = 250;

/**
 * The floor is tried only when at least this many times `depth` lessons hold two of the words: with fewer, the
 * `depth`-th of them is too weak a floor to prune anything, and its scoring would be wasted.
 */
const PAIRS_FACTOR = 2;

/**
 * When the lessons holding a word whose bound reaches the floor are more than this share of all the words' postings,
 * scoring them apart would cost more than scoring every match: the whole match list is scored instead.
 */
const MORE_SHARE = 0.25;

/**
 * The best `depth` matches (rowid, bm) of the user's words, pruned; `weights` are bm25()'s column weights. Only
 * for two to PRUNE_MAX_TERMS words.
 */
export function prunedMatches(userId: string, terms: readonly string[], weights: SQL, depth: number): SQL {
  const tagged = (match: SQL) => sql`replace(${match}, '@', (SELECT tag FROM owner))`;
  const all = tagged(sql`${anyTagged(terms)}`);
  const limit = literalLimit(depth);
  const bm = sql`bm25(lessons_fts, ${weights})`;
  const words = JSON.stringify(terms.map((t) => quoted(`@${t}`)));
  // Each set is built once (MATERIALIZED) and probed; `+rowid` keeps the probe out of FTS5's own planning. A pass
  // runs only behind a one-row CTE that says it is needed (its condition is checked before FTS5 is entered).
  return sql`WITH owner AS MATERIALIZED (SELECT ${ownerTag(userId)} AS tag),
    common AS MATERIALIZED (SELECT NOT EXISTS (SELECT 1 FROM json_each(${words})
        WHERE (SELECT count(*) FROM (SELECT 1 FROM lessons_fts WHERE lessons_fts MATCH ${tagged(sql`value`)} LIMIT ${literalLimit(COMMON)})) < ${literalLimit(COMMON)}) AS yes),
    pairs AS MATERIALIZED (SELECT lessons_fts.rowid FROM common CROSS JOIN lessons_fts WHERE common.yes AND lessons_fts MATCH ${tagged(sql`${pairsTagged(terms)}`)}),
    enough AS MATERIALIZED (SELECT count(*) >= ${literalLimit(PAIRS_FACTOR * depth)} AS yes FROM pairs),
    best AS MATERIALIZED (SELECT lessons_fts.rowid AS rowid, ${bm} AS bm FROM enough CROSS JOIN lessons_fts
      WHERE enough.yes AND lessons_fts MATCH ${all} AND +lessons_fts.rowid IN pairs ORDER BY bm, rowid LIMIT ${limit}),
    floor AS MATERIALIZED (SELECT -max(bm) * (1 - 1e-9) AS score FROM best HAVING count(*) = ${limit}),
    word AS MATERIALIZED (SELECT m, (SELECT count(*) FROM lessons_fts WHERE lessons_fts MATCH m) AS hits
      FROM floor CROSS JOIN (SELECT ${tagged(sql`value`)} AS m FROM json_each(${words}))),
    heavy AS MATERIALIZED (SELECT group_concat(word.m, ' OR ') FILTER (WHERE 2.2 * max(1e-6, ln((total.n - word.hits + 0.5) / (word.hits + 0.5))) >= floor.score) AS m,
        sum(word.hits) FILTER (WHERE 2.2 * max(1e-6, ln((total.n - word.hits + 0.5) / (word.hits + 0.5))) >= floor.score) AS hits, sum(word.hits) AS total
      FROM floor, word, (SELECT max(rowid) AS n FROM lessons) total),
    plan AS MATERIALIZED (SELECT heavy.total IS NULL OR coalesce(heavy.hits, 0) > ${sql.raw(String(MORE_SHARE))} * heavy.total AS whole, heavy.m AS m FROM common CROSS JOIN heavy WHERE common.yes),
    alone AS MATERIALIZED (SELECT lessons_fts.rowid FROM plan CROSS JOIN lessons_fts WHERE plan.m IS NOT NULL AND NOT plan.whole AND lessons_fts MATCH plan.m),
    more AS (SELECT lessons_fts.rowid AS rowid, ${bm} AS bm FROM plan CROSS JOIN lessons_fts
      WHERE plan.m IS NOT NULL AND NOT plan.whole AND lessons_fts MATCH ${all} AND +lessons_fts.rowid IN alone AND +lessons_fts.rowid NOT IN pairs),
    whole AS (SELECT lessons_fts.rowid AS rowid, ${bm} AS bm FROM common CROSS JOIN lessons_fts
      WHERE (NOT common.yes OR (SELECT whole FROM plan)) AND lessons_fts MATCH ${all})
    SELECT rowid, bm FROM (SELECT rowid, bm FROM plan CROSS JOIN best WHERE NOT plan.whole UNION ALL SELECT rowid, bm FROM more UNION ALL SELECT rowid, bm FROM whole)
    ORDER BY bm, rowid LIMIT ${limit}`;
}
