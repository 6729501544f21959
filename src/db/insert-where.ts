import { getTableColumns, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

/**
 * `INSERT INTO t (every column) SELECT <row> WHERE <condition>`: the statement itself evaluates its guard
 * (a cap, a pending proposal, a still-active key), so it holds however writers interleave; use it inside a
 * D1 batch and read whether it applied from `meta.changes`. Values are mapped by their column (JSON,
 * booleans); a column missing from `row` is inserted as NULL, so pass every column that has a default.
 */
export function insertWhere<T extends SQLiteTable>(db: Db, table: T, row: Partial<T["$inferInsert"]>, condition: SQL) {
  const values = Object.entries(getTableColumns(table)).map(([key, column]) => sql.param((row as Record<string, unknown>)[key] ?? null, column));
  return db.insert(table).select(sql`SELECT ${sql.join(values, sql`, `)} WHERE ${condition}`);
}
