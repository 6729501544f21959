/** Tool connections and their per-connection learned info, always scoped by user. */
import { and, asc, eq, sql } from "drizzle-orm";
import { type Quota, quotaExceeded } from "../config/limits";
import { returnedIds, runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { snakeRow } from "../db/public-row";
import { belowQuota } from "../db/quota";
import { connections, contextEvents, facts, type JsonObject } from "../db/schema";
import { SESSION_GONE, sessionLive } from "../db/session-live";
import { AppError, notFound } from "../lib/errors";
import { cleanMemoryText } from "../lib/sanitize";
import { cleanJsonObject } from "./clean";
import type { MemoryDeps } from "./deps";
import { dropVectors, forgetContextLogs, forgetFacts } from "./facts";

export const LEARNED_INFO_MAX_CHARS = 2000;

export type ConnectionRow = typeof connections.$inferSelect;

export const publicConnection = (c: ConnectionRow) => snakeRow(c, ["id", "name", "active", "learnedInfo", "createdAt"]);

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

/**
 * A learned info's size: the characters (code points) of its JSON, as SQLite's `length()` counts them where the
 * assistant's update is merged, so the cap answers alike whoever writes (an emoji is one character).
 */
const sizeOf = (info: JsonObject) => [...JSON.stringify(info)].length;

const tooLarge = (size: number) => new AppError("limit_exceeded", `learned_info would be ${size} characters; the limit is ${LEARNED_INFO_MAX_CHARS}`);

function checkSize(info: JsonObject) {
  const size = sizeOf(info);
  if (size > LEARNED_INFO_MAX_CHARS) throw tooLarge(size);
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
    name: cleanMemoryText(input.name, 100, "name"),
    active: input.active ?? true,
    learnedInfo,
    createdAt: Date.now(),
  };
  const [row] = await insertWhere(db, connections, values, belowQuota(connections.userId, userId, quota.limit)).returning();
  if (!row) throw quotaExceeded(quota);
  return row;
}

/**
 * Sets only the fields given (a rename or a (de)activation leaves the learned info as it is in the row, whatever
 * was written since it was read: the assistant's update, an erase); learned info given replaces it whole.
 */
export async function updateConnection(db: Db, userId: string, id: string, input: { name?: string; active?: boolean; learnedInfo?: JsonObject }) {
  const learnedInfo = input.learnedInfo && cleanJsonObject(input.learnedInfo);
  if (learnedInfo) checkSize(learnedInfo);
  const set = {
    ...(input.name === undefined ? {} : { name: cleanMemoryText(input.name, 100, "name") }),
    ...(input.active === undefined ? {} : { active: input.active }),
    ...(learnedInfo ? { learnedInfo } : {}),
  };
  if (!Object.keys(set).length) return getConnection(db, userId, id);
  const [row] = await db
    .update(connections)
    .set(set)
    .where(and(eq(connections.id, id), eq(connections.userId, userId)))
    .returning();
  if (!row) throw notFound("connection");
  return row;
}

/**
 * Merges what the assistant learned about one connection into what the row holds when the write lands (null
 * removes a key, at any depth; an object merges into an object; any other value replaces), so an erase or a
 * rename in between is neither undone nor undoes it. Written directly, not through consolidation (the tool
 * update_connection_context saves at once), with a processed context event as its audit trail: one batch, both
 * guarded by the same condition (the user's connection, the merge within the cap), so the event is there exactly
 * when the update is.
 */
export async function learnAboutConnection(db: Db, userId: string, id: string, raw: JsonObject, sessionId: string | null) {
  const updates = cleanJsonObject(raw);
  const mine = and(eq(connections.id, id), eq(connections.userId, userId));
  const merged = sql`json_patch(${connections.learnedInfo}, ${JSON.stringify(updates)})`;
  const fits = sql`length(${merged}) <= ${LEARNED_INFO_MAX_CHARS}`;
  // Learned in a chat: saved only while that conversation exists (not after an erase or its deletion).
  const live = sessionId ? sessionLive(userId, sessionId) : sql`1`;
  const now = Date.now();
  const event = {
    id: newId("evt"),
    userId,
    eventType: "connection_context",
    content: JSON.stringify(updates),
    sourceMetadata: { source: "interactive", connection_id: id, session_id: sessionId },
    status: "processed" as const,
    processed: true,
    attempts: 0,
    createdAt: now,
    processedAt: now,
  };
  const [, [row], [seen]] = await db.batch([
    insertWhere(db, contextEvents, event, sql`EXISTS (SELECT 1 FROM ${connections} WHERE ${mine} AND ${fits}) AND ${live}`),
    db
      .update(connections)
      .set({ learnedInfo: merged })
      .where(and(mine, fits, live))
      .returning(),
    // Read in the same transaction: why nothing was written, if it was not.
    db
      .select({ size: sql<number>`length(${merged})`.as("size"), live: sql<number>`${live}`.as("live") })
      .from(connections)
      .where(mine),
  ]);
  if (row) return row;
  if (!seen) throw notFound("connection");
  if (!seen.live) throw new AppError("not_found", SESSION_GONE);
  throw tooLarge(seen.size);
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
