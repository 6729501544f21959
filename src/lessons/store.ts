/**
 * The lessons store: content-hash ids, soft deletes (`unlearn`), restore. Every query is scoped by user.
 * Writing a lesson that already exists changes nothing, except that a lesson which had been recalled and
 * now comes back from another session's transcript counts as confirmed.
 */
import { and, desc, eq, isNull, or, type SQL, sql } from "drizzle-orm";
import { runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { afterCursor } from "../db/cursor";
import { lessons } from "../db/schema";
import { notFound } from "../lib/errors";
import type { ExtractedLesson, LessonType } from "./extraction-schema";
import { lessonId, normalizeLesson } from "./ids";

export type LessonRow = typeof lessons.$inferSelect;
export type NewLesson = Omit<ExtractedLesson, "scope"> & { project: string | null; sourceSession: string | null; origin: LessonRow["origin"] };

export const publicLesson = (l: LessonRow) => ({
  id: l.id,
  type: l.type,
  signal: l.signal,
  flags: l.flags,
  title: l.title,
  content: l.content,
  tags: l.tags,
  project: l.project,
  source_session: l.sourceSession,
  origin: l.origin,
  unlearned: l.unlearned,
  merged_into: l.mergedInto,
  confirmations: l.confirmations,
  recalls: l.recalls,
  last_recalled_at: l.lastRecalledAt,
  created_at: l.createdAt,
  updated_at: l.updatedAt,
});
export type PublicLesson = ReturnType<typeof publicLesson>;

/** D1 binds at most 100 parameters per statement: one lesson per insert statement, all in one batch. */
export async function writeLessons(
  db: Db,
  userId: string,
  items: readonly NewLesson[],
  now: number,
): Promise<{ ids: string[]; created: number; confirmed: number }> {
  if (!items.length) return { ids: [], created: 0, confirmed: 0 };
  const rows = await Promise.all(items.map(async (l) => ({ ...l, id: await lessonId(userId, l.project, l.type, `${l.title}\n${l.content}`) })));
  const unique = [...new Map(rows.map((r) => [r.id, r])).values()];
  const statements: SQL[] = [];
  const kinds: ("insert" | "title")[] = [];
  for (const r of unique) {
    const session = r.sourceSession ?? "";
    // The new row, or (already stored) a confirmation when it had been recalled and this is another session.
    statements.push(sql`INSERT INTO lessons (id, user_id, type, signal, flags, title, content, tags, project, source_session, origin, created_at, updated_at)
      VALUES (${r.id}, ${userId}, ${r.type}, ${r.signal}, ${JSON.stringify(r.flags)}, ${r.title}, ${r.content}, ${JSON.stringify(r.tags)}, ${r.project}, ${r.sourceSession}, ${r.origin}, ${now}, ${now})
      ON CONFLICT(id) DO UPDATE SET confirmations = lessons.confirmations + 1, updated_at = ${now}
      WHERE lessons.user_id = ${userId} AND lessons.recalls > 0 AND coalesce(lessons.source_session, '') <> ${session} AND ${session} <> ''
      RETURNING id, (created_at = ${now} AND confirmations = 0) AS created`);
    kinds.push("insert");
    // A recalled lesson with the same title from an earlier session: the same lesson, reworded.
    if (session)
      statements.push(sql`UPDATE lessons SET confirmations = confirmations + 1, updated_at = ${now}
        WHERE user_id = ${userId} AND id <> ${r.id} AND unlearned = 0 AND recalls > 0 AND lower(trim(title)) = ${normalizeLesson(r.title)}
          AND coalesce(source_session, '') <> ${session} AND updated_at < ${now} RETURNING id`);
    if (session) kinds.push("title");
  }
  const results = await runStatements(db, statements);
  let created = 0;
  let confirmed = 0;
  for (const [i, res] of results.entries()) {
    for (const row of (res.results ?? []) as { created?: number }[]) {
      if (kinds[i] === "insert" && row.created) created++;
      else confirmed++;
    }
  }
  return { ids: unique.map((r) => r.id), created, confirmed };
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
  return db
    .select()
    .from(lessons)
    .where(
      and(
        eq(lessons.userId, userId),
        input.includeUnlearned ? undefined : eq(lessons.unlearned, false),
        input.type ? eq(lessons.type, input.type) : undefined,
        input.project !== undefined ? or(eq(lessons.project, input.project), isNull(lessons.project)) : undefined,
        afterCursor(lessons.createdAt, lessons.id, input.cursor),
      ),
    )
    .orderBy(desc(lessons.createdAt), desc(lessons.id))
    .limit(input.limit)
    .all();
}

/** Unlearn (soft delete) or restore; idempotent. */
export async function setUnlearned(db: Db, userId: string, id: string, unlearned: boolean, now: number): Promise<LessonRow> {
  const row = await db
    .update(lessons)
    .set({ unlearned, updatedAt: now, ...(unlearned ? {} : { mergedInto: null }) })
    .where(and(eq(lessons.userId, userId), eq(lessons.id, id)))
    .returning()
    .get();
  if (!row) throw notFound("lesson");
  return row;
}
