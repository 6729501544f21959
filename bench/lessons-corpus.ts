/**
 * Shared by bench/lessons-recall-*.test.ts (one file per corpus: storage is per file, so each has its own 100,000).
 * Lessons recall inside workerd with local D1 (the test stack), reported, never asserted (run by `npm run bench`):
 * 100,000 lessons across 10 users (10,000 for the user asking), in a coding vocabulary drawn Zipf-like, and the
 * same queries through MiniSearch (an in-process JS full-text library, BM25) over the user's 10,000 lessons.
 * Timers in workerd advance on I/O: the D1 figures span the round trips plus the CPU between them; the in-process
 * figures are CPU only and therefore coarse (whole milliseconds).
 */
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import MiniSearch from "minisearch";
import { createDb } from "../src/db/client";
import { userMatch } from "../src/db/fts-tag";
import { BM25_WEIGHTS, recall, recallTerms, searchLessons } from "../src/lessons/recall";
import { createUser } from "../test/helpers";
import { corpusDraw, corpusQueries, lessonsOf, PER_USER, USERS } from "./lessons-corpus-data";
import { report } from "./report";

const RUNS = 200;

const GROUP = (corpus: string) => ({
  group: `Lessons: recall among 10,000 lessons for the user, 100,000 across users (${corpus} corpus)`,
  target: "p95 <= 10 ms",
  targets: { recall_ms: { p95: 10 } },
  description:
    "brain_recall's path, one D1 statement: FTS5 BM25 over the user's own postings (every indexed word is tagged with its owner), then signal, confirmations and recency, project first, ranked in SQL; limit 5. " +
    "recall_ms is what the MCP client or HTTP caller waits for: that one statement (5 rows back) and their hydration; the recall log and the per-lesson counters are written after the answer is sent (one D1 batch, shown as log_ms). search_ms is the search function alone, the same query again right after the recall (its pages are warm: a lower bound, not the target's figure). " +
    "Where the time goes: roundtrip_ms is `SELECT 1` through the same D1 binding in the same loop (the floor any statement pays locally); rows_scored (a count, not ms) is how many of the user's lessons match a query word, every one of which FTS5 scores with BM25 before the best 100 are kept. " +
    "minisearch_ms: the same queries through MiniSearch (BM25, in process) over the user's 10,000 lessons, for comparison; its index build is not timed and would run on every cold start. " +
    "minisearch_overlap5 (a share, not ms; per query): how many of the 5 lessons BM25 ranks first (before signal, recency and project) are also MiniSearch's first 5: a yardstick we did not write, for checking that a ranking change does not make results worse. " +
    (corpus === "dense"
      ? "Dense corpus: 170 common coding words, Zipf-drawn (every query term matches thousands of the user's lessons: a worst case)."
      : "Zipf corpus: the 170 coding words as the head of a Zipf vocabulary of 5,000 words (like identifiers and library names in real lessons)."),
});

/** Seeds 100,000 lessons (10 users) in one corpus; returns the user asked, their lessons and the queries. */
export async function seedCorpus(corpus: "dense" | "zipf") {
  const draw = corpusDraw(corpus);
  const users: string[] = [];
  let target: ReturnType<typeof lessonsOf> = [];
  const t0 = performance.now();
  for (let u = 0; u < USERS; u++) {
    const user = await createUser();
    users.push(user.id);
    const lessons = lessonsOf(corpus, u, draw);
    if (u === 3) target = lessons;
    for (let i = 0; i < PER_USER; i += 1000) {
      const rows = lessons.slice(i, i + 1000);
      await env.DB.prepare(
        `INSERT INTO lessons (id, user_id, type, signal, title, content, tags, project, created_at)
         SELECT json_extract(value, '$.id'), ?, json_extract(value, '$.type'), json_extract(value, '$.signal'), json_extract(value, '$.title'),
           json_extract(value, '$.content'), json_extract(value, '$.tags'), json_extract(value, '$.project'), ? - (key * 60000) FROM json_each(?)`,
      )
        .bind(user.id, Date.now(), JSON.stringify(rows.map((x) => ({ ...x, tags: JSON.stringify(x.tags) }))))
        .run();
    }
  }
  console.log(`[lessons ${corpus}] seeded ${USERS * PER_USER} lessons for ${USERS} users in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return { userId: users[3] ?? "", target, queries: corpusQueries(corpus, draw) };
}

export async function measureRecall(corpus: "dense" | "zipf") {
  {
    const { userId, target, queries } = await seedCorpus(corpus);
    const projects = [undefined, "proj-1", "proj-3"];
    const db = createDb(env.DB);

    const searchMs: number[] = [];
    const recallMs: number[] = [];
    const logMs: number[] = [];
    const roundtripMs: number[] = [];
    const rowsScored: number[] = [];
    for (let i = 0; i < RUNS + 20; i++) {
      const input = { userId, query: queries[i % queries.length] ?? "", project: projects[i % 3] ?? null, limit: 5 };
      let t = performance.now();
      await env.DB.prepare("SELECT 1").all();
      if (i >= 20) roundtripMs.push(performance.now() - t);
      // As the MCP tool and the HTTP route call it: the log and counters are handed to `defer` (written after the answer).
      // Timed first: the same query run again right after reads pages the first run has just brought in.
      const later: (() => Promise<unknown>)[] = [];
      t = performance.now();
      await recall(db, { ...input, client: "bench" }, Date.now(), (work) => later.push(work));
      if (i >= 20) recallMs.push(performance.now() - t);
      t = performance.now();
      await searchLessons(db, input, Date.now());
      if (i >= 20) searchMs.push(performance.now() - t);
      t = performance.now();
      await Promise.all(later.map((work) => work()));
      if (i >= 20) logMs.push(performance.now() - t);
    }
    // Counted after the timed loop, so the counting does not warm the pages a timed search then reads.
    const matches: number[] = [];
    for (const query of queries) {
      const [row] = await db.all<{ n: number }>(sql`SELECT count(*) AS n FROM lessons_fts WHERE lessons_fts MATCH ${userMatch(userId, recallTerms(query))}`);
      matches.push(row?.n ?? 0);
    }
    for (let i = 20; i < RUNS + 20; i++) rowsScored.push(matches[i % queries.length] ?? 0);
    report(GROUP(corpus), "search_ms", searchMs);
    report(GROUP(corpus), "recall_ms", recallMs);
    report(GROUP(corpus), "log_ms", logMs);
    report(GROUP(corpus), "roundtrip_ms", roundtripMs);
    report(GROUP(corpus), "rows_scored", rowsScored);

    const index = new MiniSearch<{ id: string; title: string; content: string; tags: string }>({ fields: ["title", "content", "tags"] });
    index.addAll(target.map((l) => ({ id: l.id, title: l.title, content: l.content, tags: l.tags.join(" ") })));
    const miniMs: number[] = [];
    for (let i = 0; i < RUNS + 20; i++) {
      const t = performance.now();
      index.search(queries[i % queries.length] ?? "").slice(0, 5);
      if (i >= 20) miniMs.push(performance.now() - t);
    }
    report(GROUP(corpus), "minisearch_ms", miniMs);
    // A yardstick for ranking changes (not a target): how many of the BM25 order's top 5 are MiniSearch's top 5.
    const overlap: number[] = [];
    for (const query of queries) {
      const ours = await db.all<{ id: string }>(sql`SELECT l.id FROM (SELECT rowid, bm25(lessons_fts, ${BM25_WEIGHTS}) AS bm FROM lessons_fts
        WHERE lessons_fts MATCH ${userMatch(userId, recallTerms(query))} ORDER BY bm LIMIT 5) h JOIN lessons l ON l.rowid = h.rowid`);
      const theirs = new Set(
        index
          .search(query)
          .slice(0, 5)
          .map((r) => String(r.id)),
      );
      overlap.push(ours.filter((r) => theirs.has(r.id)).length / 5);
    }
    report(GROUP(corpus), "minisearch_overlap5", overlap);
  }
}
