/**
 * The lessons store: content-hash ids, soft deletes (`unlearn`), restore. Every query is scoped by user.
 * Writing a lesson that already exists changes nothing, except that a lesson which had been recalled and
 * now comes back from another session's transcript counts as confirmed.
 */
import { and, eq, isNull, or, type SQL, sql } from "drizzle-orm";
import { type Quota, quotaExceeded } from "../config/limits";
import { returnedIds, runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { newestFirst } from "../db/cursor";
import { snakeRow } from "../db/public-row";
import { belowQuota, withinQuotaAfter } from "../db/quota";
import { lessons } from "../db/schema";
import { notFound } from "../lib/errors";
import { redactSecrets } from "../lib/redact";
import { clamp, stripInvisible } from "../lib/sanitize";
import type { ExtractedLesson, LessonType } from "./extraction-schema";
import { lessonId, normalizeLesson } from "./ids";

export type LessonRow = typeof lessons.$inferSelect;
export type NewLesson = Omit<ExtractedLesson, "scope"> & { project: string | null; sourceSession: string | null; origin: LessonRow["origin"] };

export const publicLesson = (l: LessonRow) =>
  snakeRow(l, [
    "id",
    "type",
    "signal",
    "flags",
    "title",
    "content",
    "tags",
    "project",
    "sourceSession",
    "origin",
    "unlearned",
    "mergedInto",
    "confirmations",
    "recalls",
    "lastRecalledAt",
    "createdAt",
    "updatedAt",
  ]);
export type PublicLesson = ReturnType<typeof publicLesson>;

/** The lesson quota's guard: live lessons count, unlearned ones do not (see `withinQuotaAfter`). */
const withinLessonQuota = (userId: string, ids: readonly string[], limit: number) =>
  withinQuotaAfter(lessons.id, lessons.userId, userId, ids, limit, sql`${lessons.unlearned} = 0`);

const storedText = (text: string, maxChars: number) => clamp(redactSecrets(stripInvisible(text)).trim(), maxChars).trimEnd();

/**
 * A lesson as it is stored, whoever wrote it (the model, a `#cor` text, brain_remember): read back into prompts
 * and MCP clients, so without invisible or control characters, and with secrets redacted, as in transcripts
 * (a tag holding one is dropped). One left without a title or content is not stored.
 */
const asStored = (l: NewLesson): NewLesson => ({
  ...l,
  title: storedText(l.title, 200),
  content: storedText(l.content, 4000),
  tags: l.tags.filter((t) => redactSecrets(t) === t),
});

/**
 * D1 binds at most 100 parameters per statement: one lesson per insert statement, all in one batch.
 * With `maxLessons` the batch is refused whole (`refused`, nothing written) when it would take the user's
 * live lessons past the cap; restating stored lessons never counts again. With `transcriptId` the batch is
 * written only while that transcript is stored (`gone` otherwise, nothing written): an erase that ran while
 * the extraction was waiting for the model is not undone by its lessons.
 */
export async function writeLessons(
  db: Db,
  userId: string,
  items: readonly NewLesson[],
  now: number,
  maxLessons?: number,
  transcriptId?: string,
): Promise<{ ids: string[]; created: number; confirmed: number; refused: boolean; gone: boolean }> {
  if (!items.length) return { ids: [], created: 0, confirmed: 0, refused: false, gone: false };
  const rows = await Promise.all(
    items
      .map(asStored)
      .filter((l) => l.title && l.content)
      .map(async (l) => ({ ...l, id: await lessonId(userId, l.project, l.type, `${l.title}\n${l.content}`) })),
  );
  const unique = [...new Map(rows.map((r) => [r.id, r])).values()];
  const quota =
    maxLessons === undefined
      ? sql`1`
      : withinLessonQuota(
          userId,
          unique.map((r) => r.id),
          maxLessons,
        );
  const stored = transcriptId === undefined ? sql`1` : sql`EXISTS (SELECT 1 FROM transcripts WHERE id = ${transcriptId} AND user_id = ${userId})`;
  const guard = sql`(${quota}) AND ${stored}`;
  // First, read the guard every other statement carries: whether this batch is applied.
  const statements: SQL[] = [sql`SELECT ${quota} AS ok, ${stored} AS stored`];
  const kinds: ("check" | "insert" | "title")[] = ["check"];
  for (const r of unique) {
    const session = r.sourceSession ?? "";
    // The new row, or (already stored) a confirmation when it had been recalled and this is another session.
    statements.push(sql`INSERT INTO lessons (id, user_id, type, signal, flags, title, content, tags, project, source_session, origin, created_at, updated_at)
      SELECT ${r.id}, ${userId}, ${r.type}, ${r.signal}, ${JSON.stringify(r.flags)}, ${r.title}, ${r.content}, ${JSON.stringify(r.tags)},
        ${r.project}, ${r.sourceSession}, ${r.origin}, ${now}, ${now}
      WHERE ${guard}
      ON CONFLICT(id) DO UPDATE SET confirmations = lessons.confirmations + 1, updated_at = ${now}
      WHERE lessons.user_id = ${userId} AND lessons.recalls > 0 AND coalesce(lessons.source_session, '') <> ${session} AND ${session} <> ''
      RETURNING id, (created_at = ${now} AND confirmations = 0) AS created`);
    kinds.push("insert");
    // A recalled lesson with the same title from an earlier session: the same lesson, reworded.
    if (session)
      statements.push(sql`UPDATE lessons SET confirmations = confirmations + 1, updated_at = ${now}
        WHERE user_id = ${userId} AND id <> ${r.id} AND unlearned = 0 AND recalls > 0 AND lower(trim(title)) = ${normalizeLesson(r.title)}
          AND coalesce(source_session, '') <> ${session} AND updated_at < ${now} AND ${guard} RETURNING id`);
    if (session) kinds.push("title");
  }
  const results = await runStatements(db, statements);
  const check = results[0]?.results?.[0] as { ok?: number; stored?: number } | undefined;
  const gone = !check?.stored;
  const refused = !gone && !check?.ok;
  let created = 0;
  let confirmed = 0;
  for (const [i, res] of results.entries()) {
    if (kinds[i] === "check") continue;
    for (const row of (res.results ?? []) as { created?: number }[]) {
      if (kinds[i] === "insert" && row.created) created++;
      else confirmed++;
    }
  }
  return { ids: refused || gone ? [] : unique.map((r) => r.id), created, confirmed, refused, gone };
}

export async function getLesson(db: Db, userId: string, id: string): Promise<LessonRow> {
  const row = await db
    .select()
    .from(lessons)
    .where(and(eq(lessons.userId, userId), eq(lessons.id, id)))
    .get();
  if (!row) throw notFound("lesson");
  return row;
}

export type ListInput = { project?: string; type?: LessonType; limit: number; cursor?: string; includeUnlearned?: boolean };

/** Newest first; `project` filters to that project's lessons and the global ones. */
export async function listLessons(db: Db, userId: string, input: ListInput): Promise<LessonRow[]> {
  const where = and(
    eq(lessons.userId, userId),
    input.includeUnlearned ? undefined : eq(lessons.unlearned, false),
    input.type ? eq(lessons.type, input.type) : undefined,
    input.project !== undefined ? or(eq(lessons.project, input.project), isNull(lessons.project)) : undefined,
  );
  const keys = { at: lessons.createdAt, id: lessons.id };
  return newestFirst(db.select().from(lessons).$dynamic(), keys, { where, before: input.cursor, limit: input.limit }).all();
}

/**
 * Unlearn (soft delete) or restore; idempotent. A restore counts against the lesson quota like a new lesson
 * (unlearned ones do not count): past it, 403 `quota_exceeded` and the lesson stays unlearned. Restoring a
 * lesson that compaction merged takes back what the merge gave the kept one (its confirmations and recalls),
 * in the same batch, so nothing is counted twice.
 */
export async function setUnlearned(db: Db, userId: string, id: string, unlearned: boolean, now: number, quota?: Quota): Promise<LessonRow> {
  const room = unlearned || !quota ? undefined : belowQuota(lessons.userId, userId, quota.limit, sql`${lessons.unlearned} = 0`);
  const change = db
    .update(lessons)
    .set({ unlearned, updatedAt: now, ...(unlearned ? {} : { mergedInto: null }) })
    .where(and(eq(lessons.userId, userId), eq(lessons.id, id), room ? or(eq(lessons.unlearned, false), room) : undefined))
    .returning({ id: lessons.id });
  const unmerge = sql`UPDATE lessons AS kept SET confirmations = max(0, kept.confirmations - back.confirmations),
      recalls = max(0, kept.recalls - back.recalls), updated_at = ${now}
    FROM lessons AS back
    WHERE back.user_id = ${userId} AND back.id = ${id} AND back.unlearned = 1 AND back.merged_into = kept.id
      AND kept.user_id = ${userId}${room ? sql` AND ${room}` : sql``}`;
  const results = await runStatements(db, unlearned ? [change] : [unmerge, change]);
  if (returnedIds(results.at(-1)).length) return getLesson(db, userId, id);
  if (quota && (await getLesson(db, userId, id))) throw quotaExceeded(quota);
  throw notFound("lesson");
}
