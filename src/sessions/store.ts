import { and, eq, isNull, sql } from "drizzle-orm";
import type { Env } from "../config/env";
import { allOf } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { newestFirst } from "../db/cursor";
import { insertWhere } from "../db/insert-where";
import { snakeRow } from "../db/public-row";
import { belowQuota } from "../db/quota";
import { projects, sessions } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { clamp, cleanText } from "../lib/sanitize";
import { chatSpentQuery } from "../usage/budget";
import { heldQuery } from "../usage/reservation";

/** The Durable Object of a session. Its name includes the owner, so another user's id reaches a different object. */
export const sessionStub = (env: Env, userId: string, sessionId: string) => env.SESSIONS.get(env.SESSIONS.idFromName(`${userId}/${sessionId}`));

/**
 * Destroys a session's object: its stored conversation, suspended turn and approvals go, and it answers not_found
 * from then on. The one way a session's conversation is removed (deleting a session, erasing a user, the erase sweep).
 */
export const destroySessionObject = (env: Env, userId: string, sessionId: string): Promise<void> => sessionStub(env, userId, sessionId).destroy();

export type SessionRow = typeof sessions.$inferSelect;

export async function getSession(db: Db, userId: string, id: string): Promise<SessionRow> {
  const row = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.id, id), eq(sessions.userId, userId)))
    .get();
  if (!row) throw notFound("session");
  return row;
}

/**
 * Creates a session only while the user's chat budget for today is not spent (`limit` null: no budget) and
 * they hold fewer sessions than `maxSessions` (the plan's quota), in one guarded statement: a request
 * either refuses writes nothing. Null when refused.
 */
export async function createSessionWithinBudget(
  db: Db,
  userId: string,
  input: { id?: string | undefined; title: string; siteId: string | null; projectId: string | null },
  limit: number | null,
  now: number,
  maxSessions?: number,
): Promise<SessionRow | null> {
  const row = {
    id: input.id ?? newId("ses"),
    userId,
    title: clamp(input.title, 80),
    siteId: input.siteId,
    projectId: input.projectId,
    messageCount: 0,
    pending: false,
    createdAt: now,
    updatedAt: now,
  };
  const withinBudget = limit === null ? sql`1` : sql`(${chatSpentQuery(db, userId, now)}) < ${limit}`;
  const withinQuota = maxSessions === undefined ? undefined : belowQuota(sessions.userId, userId, maxSessions);
  // A chosen id another session already has inserts nothing (sessionIdTaken tells that refusal apart).
  const [created] = await insertWhere(db, sessions, row, allOf(withinBudget, withinQuota)).onConflictDoNothing().returning();
  return created ?? null;
}

/**
 * Whether any user's session in these databases has this id (ids are unique across users; a client may choose one:
 * the AI SDK's chat id). A shard's primary key keeps ids unique only within it, so a new chosen id is checked on
 * every shard.
 */
export async function sessionIdTaken(dbs: readonly Db[], id: string): Promise<boolean> {
  for (const db of dbs) if ((await db.select({ id: sessions.id }).from(sessions).where(eq(sessions.id, id)).get()) !== undefined) return true;
  return false;
}

export async function listSessions(db: Db, userId: string, limit: number, before?: string) {
  return newestFirst(
    db.select().from(sessions).$dynamic(),
    { at: sessions.updatedAt, id: sessions.id },
    { where: eq(sessions.userId, userId), before, limit },
  ).all();
}

/**
 * Copies the session object's own counts into its D1 row, as a statement for the turn's bookkeeping batch.
 * Absolute values, not increments: the object's storage is the truth, so a write lost in a crash is
 * corrected by the next one instead of drifting.
 */
export const touchSessionQuery = (db: Db, userId: string, id: string, messageCount: number, pending: boolean) =>
  db
    .update(sessions)
    .set({ messageCount, pending, updatedAt: Date.now() })
    .where(and(eq(sessions.id, id), eq(sessions.userId, userId)));

export async function touchSession(db: Db, userId: string, id: string, messageCount: number, pending: boolean) {
  await touchSessionQuery(db, userId, id, messageCount, pending);
}

/**
 * The user's session (no row: not theirs, or gone) with the chat tokens they spent today (`used`) and those their
 * running turns hold (`held`), in one statement: a turn checks them before its model call, in its context batch.
 */
export const sessionOfUser = (db: Db, userId: string, id: string, now: number) =>
  db
    .select({
      id: sessions.id,
      site_id: sessions.siteId,
      project_id: sessions.projectId,
      used: sql<number>`(${chatSpentQuery(db, userId, now)})`.mapWith(Number),
      held: sql<number>`(${heldQuery(db, userId, now)})`.mapWith(Number),
    })
    .from(sessions)
    .where(and(eq(sessions.id, id), eq(sessions.userId, userId)));

/** The session's site and project, for an object that has not stored them yet; null when the user has no such session. */
export async function sessionMetaRow(db: Db, userId: string, id: string): Promise<{ site_id: string | null; project_id: string | null } | null> {
  const row = await db
    .select({ site_id: sessions.siteId, project_id: sessions.projectId })
    .from(sessions)
    .where(and(eq(sessions.id, id), eq(sessions.userId, userId)))
    .get();
  return row ?? null;
}

/** Repairs a row whose counts differ from the object's storage (read by GET /v1/sessions/{id}); the row as it now is. */
export async function reconcileSession(db: Db, row: SessionRow, messageCount: number, pending: boolean): Promise<SessionRow> {
  if (row.messageCount === messageCount && row.pending === pending) return row;
  await db
    .update(sessions)
    .set({ messageCount, pending })
    .where(and(eq(sessions.id, row.id), eq(sessions.userId, row.userId)));
  return { ...row, messageCount, pending };
}

/** Renames the caller's session (the title cleaned like every stored name); another user's id matches no row (404). */
export async function renameSession(db: Db, userId: string, id: string, title: string): Promise<SessionRow> {
  const [row] = await db
    .update(sessions)
    .set({ title: cleanText(title, 80, "title") })
    .where(and(eq(sessions.id, id), eq(sessions.userId, userId)))
    .returning();
  if (!row) throw notFound("session");
  return row;
}

export async function deleteSessionRow(db: Db, userId: string, id: string) {
  await db.delete(sessions).where(and(eq(sessions.id, id), eq(sessions.userId, userId)));
}

export const publicSession = (s: SessionRow) => snakeRow(s, ["id", "title", "siteId", "projectId", "messageCount", "pending", "createdAt", "updatedAt"]);

/** A session may be filed under a project the user owns and has not archived; another user's project is a 404. */
export async function requireProject(db: Db, userId: string, id: string) {
  const row = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, id), eq(projects.userId, userId), isNull(projects.archivedAt)))
    .get();
  // The same words whether the id is unknown, another user's or archived: the message reveals nothing, and helps.
  if (!row) throw new AppError("not_found", "project not found (an archived project takes no new chats: unarchive it first)");
  return row;
}
