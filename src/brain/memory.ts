/**
 * MEMORY: remembered insights as entries (collection 'memory', tenant = user, optional site and
 * project). The plan's entry cap is enforced inside the INSERT itself, so two concurrent writers
 * cannot both slip under it and nothing is written at the cap.
 */
import { and, count, desc, eq, getTableColumns, lt, sql } from "drizzle-orm";
import type { Plan } from "../auth/service";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { brainEntries } from "../db/schema";
import { AppError, notFound } from "../http/errors";
import { approveStatement } from "./documents";
import { runBatch } from "./batch";
import { BRAIN_LIMITS, checkLength } from "./limits";
import { sanitizeBrainContent } from "./sanitize";

export type EntryRow = typeof brainEntries.$inferSelect;

export const publicEntry = (e: EntryRow) => ({
  id: e.id,
  content: e.content,
  site: e.site,
  project_id: e.projectId,
  author: e.author,
  session_id: e.sessionId,
  created_at: e.createdAt,
});

const COLLECTION = "memory";
const mine = (userId: string) => and(eq(brainEntries.userId, userId), eq(brainEntries.collection, COLLECTION));

export function prepareEntry(plan: Plan, raw: string): string {
  const content = sanitizeBrainContent(raw);
  checkLength(plan, "memory", content);
  return content;
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

const fullError = (plan: Plan) =>
  new AppError("conflict", `MEMORY is full: the ${plan} plan keeps at most ${BRAIN_LIMITS[plan].memoryEntries} entries. Delete some entries first.`);

export async function countEntries(db: Db, userId: string): Promise<number> {
  const row = await db.select({ n: count() }).from(brainEntries).where(mine(userId)).get();
  return row?.n ?? 0;
}

export async function addMemory(db: Db, input: AddInput): Promise<EntryRow> {
  const content = prepareEntry(input.plan, input.content);
  const cap = BRAIN_LIMITS[input.plan].memoryEntries;
  const row: EntryRow = {
    id: newId("mem"),
    userId: input.userId,
    collection: COLLECTION,
    site: input.site,
    projectId: input.projectId,
    content,
    author: input.author,
    sessionId: input.sessionId,
    createdAt: Date.now(),
  };
  const pending = input.approves
    ? sql`AND EXISTS (SELECT 1 FROM brain_proposals WHERE id = ${input.approves} AND user_id = ${row.userId} AND status = 'pending')`
    : sql``;
  // drizzle lists every column in table order for INSERT ... SELECT, so the values follow that order.
  const values = Object.keys(getTableColumns(brainEntries)).map((k) => sql`${row[k as keyof EntryRow]}`);
  const insert = db.insert(brainEntries).select(
    sql`SELECT ${sql.join(values, sql`, `)}
    WHERE (SELECT count(*) FROM brain_entries WHERE user_id = ${row.userId} AND collection = ${COLLECTION}) < ${cap} ${pending}`,
  );
  const approve = input.approves
    ? approveStatement(db, row.userId, input.approves, row.createdAt, sql`EXISTS (SELECT 1 FROM brain_entries WHERE id = ${row.id})`)
    : null;
  const [inserted] = approve ? await runBatch(db, insert, approve) : await runBatch(db, insert);
  if (inserted.meta.changes === 1) return row;
  if (input.approves && (await countEntries(db, row.userId)) < cap) throw new AppError("conflict", "this proposal was already decided");
  throw fullError(input.plan);
}

export async function listMemory(db: Db, userId: string, q: { site?: string; limit: number; before?: number }) {
  const rows = await db
    .select()
    .from(brainEntries)
    .where(and(mine(userId), q.site ? eq(brainEntries.site, q.site) : undefined, q.before ? lt(brainEntries.createdAt, q.before) : undefined))
    .orderBy(desc(brainEntries.createdAt), desc(brainEntries.id))
    .limit(q.limit)
    .all();
  return { entries: rows, next_before: rows.length === q.limit ? (rows.at(-1)?.createdAt ?? null) : null };
}

export async function deleteMemory(db: Db, userId: string, id: string): Promise<void> {
  const gone = await db.delete(brainEntries).where(and(mine(userId), eq(brainEntries.id, id))).returning({ id: brainEntries.id }).get();
  if (!gone) throw notFound("MEMORY entry");
}
