/**
 * The yardsticks, over the same texts and questions as engram: SQLite FTS5's bm25() in the test's own D1 (a table of
 * its own, outside engram's schema) and MiniSearch's BM25 with its defaults. Each ranks turn ids (dia_ids), best first.
 */
import MiniSearch from "minisearch";
import type { Turn } from "./dataset";
import { contentWords, STOPWORDS, words } from "./words";

export type Ranker = (question: string) => Promise<string[]>;

const TABLE = "eval_baseline_fts";

/**
 * One conversation in a fresh FTS5 table (so BM25's document frequencies are this conversation's alone, as engram's
 * are one user's), queried with an OR of the question's words, each quoted, through FTS5's own porter stemmer.
 */
export async function fts5(db: D1Database, turns: readonly Turn[], k: number): Promise<{ content: Ranker; all: Ranker }> {
  await db.batch([
    db.prepare(`DROP TABLE IF EXISTS ${TABLE}`),
    db.prepare(`CREATE VIRTUAL TABLE ${TABLE} USING fts5(text, dia_id UNINDEXED, tokenize='porter unicode61')`),
  ]);
  const insert = db.prepare(`INSERT INTO ${TABLE} (text, dia_id) VALUES (?, ?)`);
  await db.batch(turns.map((t) => insert.bind(t.text, t.diaId)));
  const query = db.prepare(`SELECT dia_id FROM ${TABLE} WHERE ${TABLE} MATCH ? ORDER BY bm25(${TABLE}) LIMIT ?`);
  const rank = async (terms: string[]) => {
    if (!terms.length) return [];
    const { results } = await query.bind(terms.map((w) => `"${w}"`).join(" OR "), k).all<{ dia_id: string }>();
    return results.map((r) => r.dia_id);
  };
  return { content: (q) => rank(contentWords(q)), all: (q) => rank(words(q)) };
}

/** MiniSearch with default BM25 settings and OR of the terms (its default); stopwords dropped from texts and questions. */
export function miniSearch(turns: readonly Turn[], k: number): Ranker {
  const index = new MiniSearch<Turn>({
    idField: "diaId",
    fields: ["text"],
    processTerm: (term) => {
      const t = term.toLowerCase();
      return STOPWORDS.has(t) ? null : t;
    },
  });
  index.addAll(turns);
  return async (q) =>
    index
      .search(q, { combineWith: "OR" })
      .slice(0, k)
      .map((r) => String(r.id));
}
