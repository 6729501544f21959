/**
 * Shared by bench/lessons-prune-ab-*.test.ts: the recall's search with and without exact pruning
 * (src/lessons/recall-prune.ts), interleaved in one workerd process over the same 100,000 lessons as the recall
 * bench, so that both arms see the same machine. Each round runs every query x 3 projects through both arms, in an
 * order that alternates per search; every pair of answers is compared (same ids, scores and tiers, in order).
 */
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { createDb } from "../src/db/client";
import { userMatch } from "../src/db/fts-tag";
import { type RecallHit, recallTerms, searchLessons } from "../src/lessons/recall";
import { seedCorpus } from "./lessons-corpus";
import { report } from "./report";

const ROUNDS = 3;

const GROUP = (corpus: string) => ({
  group: `Lessons: recall search with and without exact pruning, A/B in one process (${corpus} corpus)`,
  target: "context (pruning is kept only if it is faster on both corpora)",
  description:
    "The recall's one statement (limit 5, the same inputs as the recall bench) with every match scored by BM25 (unpruned_ms) and with exact MaxScore-style pruning (pruned_ms), " +
    `interleaved: ${ROUNDS} rounds of every query x 3 projects, the arm run first alternating per search, each search after a \`SELECT 1\`. ` +
    "identical (a share): searches whose two answers had the same lessons, scores and tiers in the same order (must be 1). " +
    "*_common_ms: the same timings, only for the queries pruning can engage on (every word held by 250 or more of the user's lessons).",
});

const same = (a: RecallHit[], b: RecallHit[]) =>
  a.length === b.length && a.every((h, i) => h.lesson.id === b[i]?.lesson.id && h.score === b[i]?.score && h.tier === b[i]?.tier);

export async function measurePruning(corpus: "dense" | "zipf") {
  const { userId, queries } = await seedCorpus(corpus);
  const db = createDb(env.DB);
  const projects = [undefined, "proj-1", "proj-3"];
  const unpruned: number[] = [];
  const pruned: number[] = [];
  const identical: number[] = [];
  // The searches pruning can engage on (every word held by 250+ of the user's lessons), timed apart as well.
  const unprunedCommon: number[] = [];
  const prunedCommon: number[] = [];
  const common = new Set<string>();
  for (const query of queries) {
    const counts = await Promise.all(
      recallTerms(query).map(
        async (w) => (await db.all<{ n: number }>(sql`SELECT count(*) AS n FROM lessons_fts WHERE lessons_fts MATCH ${userMatch(userId, [w])}`))[0]?.n ?? 0,
      ),
    );
    if (counts.length >= 2 && counts.every((n) => n >= 250)) common.add(query);
  }
  const now = Date.now();
  const timed = async (prune: boolean, input: Parameters<typeof searchLessons>[1]) => {
    await env.DB.prepare("SELECT 1").all();
    const t = performance.now();
    const hits = await searchLessons(db, input, now, { prune });
    const ms = performance.now() - t;
    (prune ? pruned : unpruned).push(ms);
    if (common.has(input.query)) (prune ? prunedCommon : unprunedCommon).push(ms);
    return hits;
  };
  // One untimed pass compiles both statements and brings the pages in.
  for (const query of queries) await searchLessons(db, { userId, query, limit: 5 }, now, { prune: true });
  let k = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const query of queries) {
      for (const project of projects) {
        const input = { userId, query, project: project ?? null, limit: 5 };
        const first = k++ % 2 === 0;
        const a = first ? await timed(false, input) : await timed(true, input);
        const b = first ? await timed(true, input) : await timed(false, input);
        identical.push(same(a, b) ? 1 : 0);
      }
    }
  }
  report(GROUP(corpus), "unpruned_ms", unpruned);
  report(GROUP(corpus), "pruned_ms", pruned);
  report(GROUP(corpus), "identical", identical);
  // The Zipf corpus has no such query: no rows rather than empty ones.
  if (prunedCommon.length) {
    report(GROUP(corpus), "unpruned_common_ms", unprunedCommon);
    report(GROUP(corpus), "pruned_common_ms", prunedCommon);
  }
}
