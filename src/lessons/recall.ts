/**
 * Recall: full-text search over one user's lessons, safe for any string (every word is quoted, so FTS5
 * operators in the query are only words), with a LIKE fallback when the query has no searchable word.
 * Ranked by relevance (BM25 over title, content and tags), then signal, confirmations and recency;
 * the caller's project first, then global lessons, then other projects'. Every recall is logged and
 * counted on the lessons it returned.
 */
import { type SQL, sql } from "drizzle-orm";
import { deferOrRun, type ToolContext } from "../core/tool";
import { runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { lessonRecalls } from "../db/schema";
import { isStopword, words } from "../memory/text";
import type { LessonType } from "./extraction-schema";
import type { LessonRow } from "./store";

export type RecallInput = { userId: string; query: string; project?: string | null; type?: LessonType; limit: number };
export type RecallHit = { lesson: LessonRow; score: number; tier: 0 | 1 | 2 };

/** Content words of a query; at most 24 (a pasted stack trace is not 500 OR terms). */
export function recallTerms(text: string): string[] {
  return [...new Set(words(text).filter((w) => !isStopword(w) && (w.length > 1 || /\d/.test(w))))].slice(0, 24);
}

const quoted = (term: string) => `"${term.replace(/"/g, '""')}"`;

/**
 * The FTS5 query: the owner's partition AND any of the words. The words are not restricted to the text columns
 * (a column filter measured ~30% slower): the owner column holds only the owner's own token, weighted 0 in rank.
 */
export function ftsMatch(userId: string, terms: readonly string[]): string {
  return `owner : ${quoted(userId.replace(/_/g, ""))} AND (${terms.map(quoted).join(" OR ")})`;
}

const SIGNAL_WEIGHT = { HIGH: 1, MED: 0.85, LOW: 0.7 } as const;
const DAY = 86_400_000;
/** How deep FTS5 ranks before scoping: a user's best matches are within the first few hundred of theirs. */
const DEPTH = 100;
/** BM25 column weights: title, content, tags, owner (the owner token is a filter, never a match). */
const BM25_WEIGHTS = sql.raw("2.0, 1.0, 1.5, 0.0");

export function rankScore(lexical: number, best: number, l: Pick<LessonRow, "signal" | "confirmations" | "createdAt">, now: number): number {
  const relevance = best > 0 ? lexical / best : 0;
  const confirmed = 1 + 0.15 * Math.min(l.confirmations, 5);
  const recency = 0.8 + 0.2 * Math.exp(-Math.max(0, now - l.createdAt) / (90 * DAY));
  return relevance * SIGNAL_WEIGHT[l.signal] * confirmed * recency;
}

const columns = sql`l.id, l.user_id AS userId, l.type, l.signal, l.flags, l.title, l.content, l.tags, l.project, l.source_session AS sourceSession,
  l.origin, l.unlearned, l.merged_into AS mergedInto, l.confirmations, l.recalls, l.last_recalled_at AS lastRecalledAt, l.created_at AS createdAt, l.updated_at AS updatedAt`;

type Raw = Omit<LessonRow, "flags" | "tags" | "unlearned" | "owner"> & { flags: string; tags: string; unlearned: number; lexical: number };

const hydrate = (r: Raw): LessonRow & { lexical: number } => ({
  ...r,
  flags: JSON.parse(r.flags) as string[],
  tags: JSON.parse(r.tags) as string[],
  unlearned: !!r.unlearned,
  owner: null,
});

function filters(input: RecallInput): SQL {
  const parts = [sql`l.user_id = ${input.userId}`, sql`l.unlearned = 0`];
  if (input.type) parts.push(sql`l.type = ${input.type}`);
  return sql.join(parts, sql` AND `);
}

async function candidates(db: Db, input: RecallInput): Promise<(LessonRow & { lexical: number })[]> {
  const terms = recallTerms(input.query);
  if (terms.length) {
    // bm25() called with its weights rather than the configured `rank`: same order, ~30% less time in FTS5.
    const rows = await db.all<Raw>(sql`SELECT ${columns}, -h.bm AS lexical
      FROM (SELECT rowid, bm25(lessons_fts, ${BM25_WEIGHTS}) AS bm FROM lessons_fts WHERE lessons_fts MATCH ${ftsMatch(input.userId, terms)}
        ORDER BY bm LIMIT ${DEPTH}) h
      JOIN lessons l ON l.rowid = h.rowid WHERE ${filters(input)}`);
    return rows.map(hydrate);
  }
  // No searchable word ("#!", "++"): a literal substring match, with LIKE's wildcards escaped.
  const needle = input.query.trim().slice(0, 200);
  if (!needle) return [];
  const like = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await db.all<Raw>(sql`SELECT ${columns}, 1.0 AS lexical FROM lessons l
    WHERE ${filters(input)} AND (l.title LIKE ${like} ESCAPE '\\' OR l.content LIKE ${like} ESCAPE '\\') ORDER BY l.created_at DESC LIMIT ${DEPTH}`);
  return rows.map(hydrate);
}

const tierOf = (l: LessonRow, project: string | null | undefined): 0 | 1 | 2 => {
  if (project && l.project === project) return 0;
  return l.project === null ? 1 : 2;
};

export async function searchLessons(db: Db, input: RecallInput, now: number): Promise<RecallHit[]> {
  const rows = await candidates(db, input);
  const best = Math.max(0, ...rows.map((r) => r.lexical));
  return rows
    .map(({ lexical, ...lesson }) => ({ lesson, score: rankScore(lexical, best, lesson, now), tier: tierOf(lesson, input.project) }))
    .sort((a, b) => a.tier - b.tier || b.score - a.score || b.lesson.createdAt - a.lesson.createdAt)
    .slice(0, input.limit)
    .map((h) => ({ ...h, score: Math.round(h.score * 1e4) / 1e4 }));
}

/** Logs the recall and counts it on each returned lesson, in one batch. */
export async function logRecall(db: Db, input: RecallInput & { client: string }, ids: readonly string[], now: number): Promise<string> {
  const id = newId("rcl");
  await runStatements(db, [
    db.insert(lessonRecalls).values({
      id,
      userId: input.userId,
      query: input.query.slice(0, 1000),
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
