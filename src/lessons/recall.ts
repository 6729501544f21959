/**
 * Recall: full-text search over one user's lessons, safe for any string (every word is quoted, so FTS5
 * operators in the query are only words), with a substring match when the query has no searchable word.
 * Ranked by relevance (BM25 over title, content and tags), then signal, confirmations and recency;
 * the caller's project first, then global lessons, then other projects'. Every recall is logged and
 * counted on the lessons it returned.
 */
import { type SQL, sql } from "drizzle-orm";
import { deferOrRun, type ToolContext } from "../core/tool";
import { runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { ownerTag, uncommonTerms } from "../db/fts-tag";
import { literalLimit } from "../db/limit";
import { lessonRecalls } from "../db/schema";
import { redactSecrets } from "../lib/redact";
import { clamp } from "../lib/sanitize";
import { words } from "../memory/text";
import type { LessonType } from "./extraction-schema";
import type { LessonRow } from "./store";

export type RecallInput = { userId: string; query: string; project?: string | null; type?: LessonType; limit: number };
export type RecallHit = { lesson: LessonRow; score: number; tier: 0 | 1 | 2 };

/**
 * The words of a query, each once; at most 32 (a pasted stack trace is not 500 OR terms). No stop list: the
 * words common in the user's own lessons are left out in SQL (`uncommonTerms`), in whatever language they write.
 */
export function recallTerms(text: string): string[] {
  return [...new Set(words(text).filter((w) => w.length > 1 || /\d/.test(w)))].slice(0, 32);
}

/** A word in more than this share of the user's lessons, and in more than COMMON_FLOOR of them, is not searched. */
const COMMON_SHARE = 0.05;
const COMMON_FLOOR = 20;

/** Ranking: relevance (BM25 relative to the best candidate) times signal, confirmations (+15% each, up to 5) and recency. */
const SIGNAL_WEIGHT = { HIGH: 1, MED: 0.85, LOW: 0.7 } as const;
const DECAY_MS = 90 * 86_400_000;
const SIGNAL = sql.raw(
  `CASE c.signal ${Object.entries(SIGNAL_WEIGHT)
    .map(([k, w]) => `WHEN '${k}' THEN ${w}`)
    .join(" ")} END`,
);

/**
 * How deep FTS5 ranks before scoping: a user's best matches are within the first few hundred of theirs. This LIMIT
 * and the caller's are written into the statement (`literalLimit`): bound, they made SQLite recompile the recall at
 * every call (docs/lessons.md, "Compiled once").
 */
const DEPTH = 100;
/** BM25 column weights: title, content, tags. */
export const BM25_WEIGHTS = sql.raw("2.0, 1.0, 1.5");

const columns = sql`l.id, l.user_id AS userId, l.type, l.signal, l.flags, l.title, l.content, l.tags, l.project, l.source_session AS sourceSession,
  l.origin, l.unlearned, l.merged_into AS mergedInto, l.confirmations, l.recalls, l.last_recalled_at AS lastRecalledAt,
  l.created_at AS createdAt, l.updated_at AS updatedAt`;

type Raw = Omit<LessonRow, "flags" | "tags" | "unlearned"> & { flags: string; tags: string; unlearned: number; score: number; tier: 0 | 1 | 2 };

const hydrate = ({ score, tier, ...r }: Raw): RecallHit => ({
  lesson: { ...r, flags: JSON.parse(r.flags) as string[], tags: JSON.parse(r.tags) as string[], unlearned: !!r.unlearned },
  score: Math.round(score * 1e4) / 1e4,
  tier,
});

/** What ranking reads of a candidate: the full rows are read for the `limit` winners only. */
const RANKED = sql.raw("l.rowid AS doc, l.signal, l.confirmations, l.created_at, l.project");

function filters(input: RecallInput): SQL {
  const parts = [sql`l.user_id = ${input.userId}`, sql`l.unlearned = 0`];
  if (input.type) parts.push(sql`l.type = ${input.type}`);
  return sql.join(parts, sql` AND `);
}

/**
 * The candidates (rowid, lexical): the user's best BM25 matches, or for a query without a searchable word
 * ("#!", "++", a row of emoji) a literal substring match of its first 200 characters, newest first, all equally relevant.
 */
function candidates(input: RecallInput): SQL | null {
  const terms = recallTerms(input.query);
  if (terms.length) {
    // bm25() called with its weights rather than the configured `rank`: same order, ~30% less time in FTS5.
    // CROSS JOIN keeps the FTS5 hits as the outer loop: left to itself the planner walks the user's 10,000 rows by
    // index and probes the hits (measured 2-3x slower in this statement).
    return sql`WITH tag AS (SELECT ${ownerTag(input.userId)} AS tag),
        cap AS (SELECT max(${COMMON_FLOOR}, CAST(count(*) * ${COMMON_SHARE} AS INTEGER)) AS cap FROM lessons WHERE user_id = ${input.userId}),
        ${uncommonTerms("lessons_fts", terms)}
      SELECT ${RANKED}, -h.bm AS lexical
      FROM (SELECT rowid, bm25(lessons_fts, ${BM25_WEIGHTS}) AS bm FROM lessons_fts
        WHERE lessons_fts MATCH (SELECT q FROM m)
        ORDER BY bm LIMIT ${literalLimit(DEPTH)}) h
      CROSS JOIN lessons l ON l.rowid = h.rowid WHERE ${filters(input)}`;
  }
  const needle = clamp(input.query.trim(), 200);
  if (!needle) return null;
  // instr, not LIKE: D1 caps a LIKE pattern at 50 bytes (13 emoji, a run of symbols), and instr has no wildcards to
  // escape. lower() folds ASCII only, as LIKE did.
  return sql`SELECT ${RANKED}, 1.0 AS lexical FROM lessons l
    WHERE ${filters(input)} AND (instr(lower(l.title), lower(${needle})) > 0 OR instr(lower(l.content), lower(${needle})) > 0)
    ORDER BY l.created_at DESC LIMIT ${literalLimit(DEPTH)}`;
}

/**
 * One statement: the candidates, ranked in SQL (relevance relative to the best candidate, signal, confirmations,
 * recency), the caller's project first, then global lessons, then other projects'; only `limit` rows come back.
 */
export async function searchLessons(db: Db, input: RecallInput, now: number): Promise<RecallHit[]> {
  const statement = searchStatement(input, now);
  return statement ? (await db.all<Raw>(statement)).map(hydrate) : [];
}

export function searchStatement(input: RecallInput, now: number): SQL | null {
  const found = candidates(input);
  if (!found) return null;
  const project = input.project || null;
  return sql`WITH c AS (${found}),
    s AS (SELECT c.doc, c.created_at, CASE WHEN max(c.lexical) OVER () > 0 THEN c.lexical / max(c.lexical) OVER () ELSE 0 END
        * ${SIGNAL}
        * (1 + 0.15 * min(c.confirmations, 5))
        * (0.8 + 0.2 * exp(-max(0, ${now} - c.created_at) / ${sql.raw(`${DECAY_MS}.0`)})) AS score,
      CASE WHEN c.project = ${project} THEN 0 WHEN c.project IS NULL THEN 1 ELSE 2 END AS tier
      FROM c),
    top AS (SELECT doc, score, tier FROM s ORDER BY tier, score DESC, created_at DESC LIMIT ${literalLimit(input.limit)})
    SELECT ${columns}, score, tier FROM top CROSS JOIN lessons l ON l.rowid = top.doc ORDER BY tier, score DESC, l.created_at DESC`;
}

/** Logs the recall and counts it on each returned lesson, in one batch. */
export async function logRecall(db: Db, input: RecallInput & { client: string }, ids: readonly string[], now: number): Promise<string> {
  const id = newId("rcl");
  await runStatements(db, [
    db.insert(lessonRecalls).values({
      id,
      userId: input.userId,
      query: redactSecrets(input.query).slice(0, 1000),
      client: input.client,
      project: input.project ?? null,
      resultIds: [...ids],
      createdAt: now,
    }),
    sql`UPDATE lessons SET recalls = recalls + 1, last_recalled_at = ${now}
      WHERE user_id = ${input.userId} AND id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
  ]);
  return id;
}

/**
 * Search, log and count: what brain_recall and the HTTP search do. The log and the counters are written
 * through `defer` when given (after the answer is sent: a recall waits for one D1 round trip, not two).
 */
export async function recall(db: Db, input: RecallInput & { client: string }, now: number, defer?: ToolContext["defer"]): Promise<RecallHit[]> {
  const hits = await searchLessons(db, input, now);
  const ids = hits.map((h) => h.lesson.id);
  await deferOrRun({ defer }, () => logRecall(db, input, ids, now));
  return hits;
}
