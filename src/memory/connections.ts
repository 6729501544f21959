/** Tool connections and their per-connection learned info, always scoped by user. */
import { and, asc, eq } from "drizzle-orm";
import { type Quota, quotaExceeded } from "../config/limits";
import { returnedIds, runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { belowQuota } from "../db/quota";
import { connections, contextEvents, facts, type JsonObject } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { cleanText } from "../lib/sanitize";
import { cleanJsonObject } from "./clean";
import { mergeScaffold } from "./consolidation-schema";
import type { MemoryDeps } from "./deps";
import { dropVectors, forgetContextLogs, forgetFacts } from "./facts";

export const LEARNED_INFO_MAX_CHARS = 2000;

export type ConnectionRow = typeof connections.$inferSelect;

export const publicConnection = (c: ConnectionRow) => ({ id: c.id, name: c.name, active: c.active, learned_info: c.learnedInfo, created_at: c.createdAt });

export async function getConnection(db: Db, userId: string, id: string): Promise<ConnectionRow> {
  const row = await db
    .select()
    .from(connections)
    .where(and(eq(connections.id, id), eq(connections.userId, userId)))
    .get();
  if (!row) throw notFound("connection");
  return row;
}

export const listConnections = (db: Db, userId: string) =>
  db.select().from(connections).where(eq(connections.userId, userId)).orderBy(asc(connections.createdAt)).all();

function checkSize(info: JsonObject) {
  const size = JSON.stringify(info).length;
  if (size > LEARNED_INFO_MAX_CHARS) throw new AppError("limit_exceeded", `learned_info would be ${size} characters; the limit is ${LEARNED_INFO_MAX_CHARS}`);
}

/**
 * Adds a connection while the user holds fewer than the plan allows (counted inside the INSERT). Learned info,
 * whoever writes it, is cleaned like the scaffold (it is in every prompt while the connection is active).
 */
export async function createConnection(db: Db, userId: string, quota: Quota, input: { name: string; active?: boolean; learnedInfo?: JsonObject }) {
  const learnedInfo = cleanJsonObject(input.learnedInfo ?? {});
  checkSize(learnedInfo);
  const values = {
    id: newId("con"),
    userId,
    name: cleanText(input.name, 100, "name"),
    active: input.active ?? true,
    learnedInfo,
    createdAt: Date.now(),
  };
  const [row] = await insertWhere(db, connections, values, belowQuota(connections.userId, userId, quota.limit)).returning();
  if (!row) throw quotaExceeded(quota);
  return row;
}

export async function updateConnection(db: Db, userId: string, id: string, input: { name?: string; active?: boolean; learnedInfo?: JsonObject }) {
  const current = await getConnection(db, userId, id);
  const learnedInfo = input.learnedInfo && cleanJsonObject(input.learnedInfo);
  if (learnedInfo) checkSize(learnedInfo);
  const [row] = await db
    .update(connections)
    .set({
      name: input.name === undefined ? current.name : cleanText(input.name, 100, "name"),
      active: input.active ?? current.active,
      learnedInfo: learnedInfo ?? current.learnedInfo,
    })
    .where(and(eq(connections.id, id), eq(connections.userId, userId)))
    .returning();
  if (!row) throw notFound("connection");
  return row;
}

/**
 * Merges what the assistant learned about one connection (null removes a key). Written directly, as the
 * seed's update_connection_context does, with a processed context event as its audit trail.
 */
export async function learnAboutConnection(db: Db, userId: string, id: string, raw: JsonObject, sessionId: string | null) {
  const current = await getConnection(db, userId, id);
  const updates = cleanJsonObject(raw);
  const learnedInfo = mergeScaffold(current.learnedInfo, updates);
  checkSize(learnedInfo);
  const now = Date.now();
  await db.batch([
    db
      .update(connections)
      .set({ learnedInfo })
      .where(and(eq(connections.id, id), eq(connections.userId, userId))),
    db.insert(contextEvents).values({
      id: newId("evt"),
      userId,
      eventType: "connection_context",
      content: JSON.stringify(updates),
      sourceMetadata: { source: "interactive", connection_id: id, session_id: sessionId },
      status: "processed",
      processed: true,
      processedAt: now,
    }),
  ]);
  return { ...current, learnedInfo };
}

/**
 * Deletes the connection and the facts scoped to it, with the statements they had replaced (`forgetFacts`) and
 * the audit rows of the turns shown any of them (`forgetContextLogs`), in one batch; then their vectors.
 */
export async function deleteConnection(deps: MemoryDeps, userId: string, id: string): Promise<{ facts: number }> {
  await getConnection(deps.db, userId, id);
  const scoped = eq(facts.connectionId, id);
  const [, removed] = await runStatements(deps.db, [
    forgetContextLogs(userId, scoped),
    forgetFacts(userId, scoped),
    deps.db.delete(connections).where(and(eq(connections.id, id), eq(connections.userId, userId))),
  ]);
  const ids = returnedIds(removed);
  await dropVectors(deps, userId, ids);
  return { facts: ids.length };
}
