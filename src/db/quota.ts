import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * The guard of a quota-checked write: true while the user holds fewer than `limit` rows of the column's
 * table (matching `where`). Evaluated inside the INSERT (see insertWhere), so two racing writers at the
 * boundary cannot both pass it, and it costs no round trip of its own.
 */
export const belowQuota = (userColumn: SQLiteColumn, userId: string, limit: number, where?: SQL) =>
  sql`(SELECT count(*) FROM ${userColumn.table} WHERE ${userColumn} = ${userId}${where ? sql` AND ${where}` : sql``}) < ${limit}`;

/**
 * The guard of a quota-checked batch of upserts: true while the user's rows (matching `where`), with those
 * of `ids` not stored yet, stay within `limit`. Writing the batch leaves the value unchanged, so every
 * statement guarded by it sees the same answer: the batch is applied whole or not at all, and rows the user
 * already holds never count twice.
 */
export const withinQuotaAfter = (idColumn: SQLiteColumn, userColumn: SQLiteColumn, userId: string, ids: readonly string[], limit: number, where?: SQL) =>
  sql`(SELECT count(*) FROM ${userColumn.table} WHERE ${userColumn} = ${userId}${where ? sql` AND ${where}` : sql``})
    + (SELECT count(*) FROM json_each(${JSON.stringify(ids)}) j WHERE NOT EXISTS (SELECT 1 FROM ${idColumn.table} WHERE ${idColumn} = j.value)) <= ${limit}`;
