/**
 * MEMORY: remembered insights as entries (collection 'memory', tenant = user, optional site and
 * project). Every guard is evaluated inside the write itself (the plan's entry cap, the project being
 * the user's, the site being registered, a proposal still pending), so concurrent writers cannot slip
 * past one, and nothing is written when one fails.
 */

import { and, count, eq, type SQL, sql } from "drizzle-orm";
import { allOf, changes, runBatch } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { newestFirst, nextCursor } from "../db/cursor";
import { insertWhere } from "../db/insert-where";
import { snakeRow } from "../db/public-row";
import type { Plan } from "../db/schema";
import { brainEntries } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { alreadyDecided, approveStatement, isPending, ownsProject, projectIsMine, proposalPending } from "./guards";
import { BRAIN_LIMITS, prepareText } from "./limits";
import { findSite, siteCapError, siteExists, siteInsert } from "./sites";

export type EntryRow = typeof brainEntries.$inferSelect;

export const publicEntry = (e: EntryRow) => snakeRow(e, ["id", "content", "site", "projectId", "author", "sessionId", "createdAt"]);

const COLLECTION = "memory";
const mine = (userId: string) => and(eq(brainEntries.userId, userId), eq(brainEntries.collection, COLLECTION));

export const prepareEntry = (plan: Plan, raw: string) => prepareText(plan, "memory", raw);

/** The one "MEMORY is full" rule: a guard for any statement that adds (or proposes) an entry, and its error. */
export const memoryHasRoom = (userId: string, plan: Plan) =>
  sql`(SELECT count(*) FROM brain_entries WHERE user_id = ${userId} AND collection = ${COLLECTION}) < ${BRAIN_LIMITS[plan].memoryEntries}`;
export const memoryFull = (plan: Plan) =>
  new AppError("conflict", `MEMORY is full: the ${plan} plan keeps at most ${BRAIN_LIMITS[plan].memoryEntries} entries. Delete some entries first.`);

export async function countEntries(db: Db, userId: string): Promise<number> {
  const row = await db.select({ n: count() }).from(brainEntries).where(mine(userId)).get();
  return row?.n ?? 0;
}

export type AddInput = {
  userId: string;
  plan: Plan;
  content: string;
  site: string | null;
  projectId: string | null;
  author: "assistant" | "user";
  sessionId: string | null;
  /** Marks this pending proposal approved in the same batch; the entry is written only while it is pending. */
  approves?: string;
};

/** The INSERT of one entry, guarded by the plan's cap and `also`; a batch of them cannot overshoot the cap. */
export function memoryInsert(db: Db, row: EntryRow, plan: Plan, also?: SQL) {
  return insertWhere(db, brainEntries, row, allOf(memoryHasRoom(row.userId, plan), also));
}

/** Adds an entry; an entry about a site registers the site (so deleting the site forgets the entry). */
export async function addMemory(db: Db, input: AddInput): Promise<EntryRow> {
  const { userId, plan, site, projectId, approves } = input;
  const row: EntryRow = {
    id: newId("mem"),
    userId,
    collection: COLLECTION,
    site,
    projectId,
    content: prepareEntry(plan, input.content),
    author: input.author,
    sessionId: input.sessionId,
    createdAt: Date.now(),
  };
  // Each statement is guarded by every condition, so the batch applies whole or not at all.
  const shared = allOf(projectIsMine(userId, projectId), approves ? proposalPending(userId, approves) : undefined);
  const insert = memoryInsert(db, row, plan, allOf(shared, site ? siteExists(userId, site) : undefined));
  const approve = approves ? [approveStatement(db, userId, approves, row.createdAt, sql`EXISTS (SELECT 1 FROM brain_entries WHERE id = ${row.id})`)] : [];
  const results = site
    ? await runBatch(db, siteInsert(db, userId, plan, site, null, allOf(memoryHasRoom(userId, plan), shared)), insert, ...approve)
    : await runBatch(db, insert, ...approve);
  if (changes(results[site ? 1 : 0]) === 1) return row;
  throw await refusal(db, input);
}

/** Why a guarded write did not apply (read afterwards: the batch itself only says that it did not). */
async function refusal(db: Db, input: Pick<AddInput, "userId" | "plan" | "site" | "projectId" | "approves">): Promise<AppError> {
  if (input.approves && !(await isPending(db, input.userId, input.approves))) return alreadyDecided();
  if (input.projectId && !(await ownsProject(db, input.userId, input.projectId))) return notFound("project");
  if (input.site && !(await findSite(db, input.userId, input.site))) return siteCapError(input.plan);
  return memoryFull(input.plan);
}

export async function listMemory(db: Db, userId: string, q: { site?: string; limit: number; before?: string }) {
  const where = and(mine(userId), q.site ? eq(brainEntries.site, q.site) : undefined);
  const keys = { at: brainEntries.createdAt, id: brainEntries.id };
  const rows = await newestFirst(db.select().from(brainEntries).$dynamic(), keys, { where, before: q.before, limit: q.limit }).all();
  return { entries: rows, next_before: nextCursor(rows, q.limit, (e) => [e.createdAt, e.id]) };
}

export async function deleteMemory(db: Db, userId: string, id: string): Promise<void> {
  const gone = await db
    .delete(brainEntries)
    .where(and(mine(userId), eq(brainEntries.id, id)))
    .returning({ id: brainEntries.id })
    .get();
  if (!gone) throw notFound("MEMORY entry");
}
