import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * The guard of a quota-checked write: true while the user holds fewer than `limit` rows of the column's
 * table (matching `where`). Evaluated inside the INSERT (see insertWhere), so two racing writers at the
 * boundary cannot both pass it, and it costs no round trip of its own.
 */
export const belowQuota = (userColumn: SQLiteColumn, userId: string, limit: number, where?: SQL) =>
  sql`(SELECT count(*) FROM ${userColumn.table} WHERE ${userColumn} = ${userId}${where ? sql` AND ${where}` : sql``}) < ${limit}`;
