/**
 * Owner-tagged full-text indexes (`facts_fts`, `lessons_fts`): every indexed word is written with its owner's tag
 * in front ("12345678retry"), so a term's postings are one user's only. A search neither walks other users'
 * postings nor counts them in BM25's per-term document frequencies. The migrations that build these indexes
 * compute the tagged text in SQL (a view FTS5 reads on 'rebuild', and triggers) with the expressions below;
 * test/memory-fts.test.ts checks that the migrations hold them verbatim.
 */
import { type SQL, sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { ALPHABET } from "./client";

/** A user id: a bound value (a search) or a column of the table being indexed (a migration). */
type UserRef = string | SQL;

const digit = (user: UserRef, i: number) => sql`instr(${sql.raw(`'${ALPHABET}'`)}, substr(${user}, ${sql.raw(String(i))}, 1))`;

/**
 * The user's tag: 8 digits from characters 5-10 of the id (the random part after `usr_`). Digits in front of a word
 * leave porter's stemming of it unchanged. Two users may share a tag: that only widens what FTS5 reads, since
 * every search also keeps only rows whose user_id is the caller's.
 */
export function ownerTag(user: UserRef): SQL {
  const d = (i: number) => digit(user, i);
  return sql`(10000000 + (${d(5)} + 35 * (${d(6)} + 35 * (${d(7)} + 35 * (${d(8)} + 35 * (${d(9)} + 35 * ${d(10)}))))) % 90000000)`;
}

/** FTS5 phrase quoting: a word with FTS5 syntax in it ("NEAR(", "*", "-", "OR") is only a word. */
const quoted = (term: string) => `"${term.replace(/"/g, '""')}"`;

/** The FTS5 query "any of these words", each tagged (`@` stands for the user's tag, substituted in SQL). */
export const anyTagged = (terms: readonly string[]): string => terms.map((t) => quoted(`@${t}`)).join(" OR ");

/**
 * The MATCH string for one user: `anyTagged` with the user's tag in place of `@`. A plain expression of the
 * parameters: written as a scalar subquery it measured ~10% more of the statement's time in Node's SQLite.
 * Words carry no `@` (they are letters and digits), so only the tag slots are replaced.
 */
export function userMatch(userId: string, terms: readonly string[]): SQL {
  return sql`replace(${anyTagged(terms)}, '@', ${ownerTag(userId)})`;
}

/**
 * Punctuation that becomes a space before tagging, so the word after it is tagged too: ASCII punctuation and
 * whitespace, non-breaking and thin spaces, and the Unicode marks common in written text (quotes, dashes,
 * arrows, math and check marks, currency, CJK punctuation). A word after a rarer symbol (an emoji with no space)
 * is indexed untagged and cannot be found by itself.
 */
const PUNCTUATION = [
  ...["char(9)", "char(10)", "char(13)"],
  ..."!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".split("").map((c) => `'${c === "'" ? "''" : c}'`),
  ..."\u00a0 \u2009 \u202f ‘ ’ “ ” « » — – … • · → ← ⇒ ↔ ≥ ≤ ≠ ≈ × ÷ ± ✓ ✗ ✔ ❌ © ® ™ ° § ¿ ¡ € £ 、 。 ， ： ； ！ ？ （ ） 「 」 【 】"
    .split(" ")
    .map((c) => `'${c}'`),
];
/** Runs of up to 32 spaces become one (five halvings), so no empty "word" takes a tag of its own. */
const COLLAPSES = 5;

/**
 * The tagged text FTS5 indexes for a column: each word of `text` prefixed with the owner's tag. Written once
 * here; the migrations hold its output (rendered by `migrationSql`), and FTS5's 'delete' must be given exactly
 * what was indexed, so the view and the triggers use this same expression.
 */
export function taggedText(text: SQL, user: SQL): SQL {
  let spaced = text;
  for (const p of PUNCTUATION) spaced = sql`replace(${spaced}, ${sql.raw(p)}, ' ')`;
  for (let i = 0; i < COLLAPSES; i++) spaced = sql`replace(${spaced}, '  ', ' ')`;
  const tag = ownerTag(user);
  return sql`${tag} || replace(trim(${spaced}), ' ', ' ' || ${tag})`;
}

/** An expression of columns only, as SQL text for a migration (it binds no value). */
export function migrationSql(expression: SQL): string {
  const { sql: text, params } = new SQLiteAsyncDialect().sqlToQuery(expression);
  if (params.length) throw new Error("a migration expression must not bind values");
  return text;
}

/**
 * CTEs `t`, `keep` and `m` of a search over one user's owner-tagged index: `m.q` is the MATCH string of the
 * query's words, each tagged, leaving out every word found in more than `cap.cap` of the user's own rows, unless
 * no word of the query is both found and below the cap: then every word is searched (a question whose only
 * uncommon words are ones the user never wrote would otherwise search those alone and find nothing). That is what a stop list would drop, measured on the user's own text in whatever language they
 * write; without it a word like "the" makes FTS5 score most of the user's rows. Needs CTEs `tag(tag)` and
 * `cap(cap)` before it. Counting a word's rows stops one past the cap. Words are letters and digits (see
 * `words`), so quoting them needs no escaping.
 */
export function uncommonTerms(index: "facts_fts" | "lessons_fts", terms: readonly string[]): SQL {
  const fts = sql.raw(index);
  return sql`t AS (SELECT j.key AS pos, j.value AS term, (SELECT count(*) FROM (SELECT 1 FROM ${fts} WHERE ${fts} MATCH '"' || tag.tag || j.value || '"'
      LIMIT (SELECT cap + 1 FROM cap))) AS df FROM json_each(${JSON.stringify(terms)}) j, tag),
    keep AS (SELECT pos, term FROM t WHERE df > 0 AND df <= (SELECT cap FROM cap)),
    m AS (SELECT group_concat('"' || tag.tag || term || '"', ' OR ') AS q
      FROM (SELECT pos, term FROM keep UNION ALL SELECT pos, term FROM t WHERE NOT EXISTS (SELECT 1 FROM keep) ORDER BY pos), tag)`;
}
