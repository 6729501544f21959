import { getTableColumns, sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

/**
 * `INSERT INTO table SELECT <row> WHERE <condition>`: an insert that happens only if the condition holds
 * when it runs, for use inside a D1 batch (check `meta.changes`). Missing columns are inserted as NULL,
 * so pass every column that has a default.
 */
export function insertWhere<T extends SQLiteTable>(db: Db, table: T, row: Partial<T["$inferInsert"]>, condition: SQL) {
  // drizzle lists every column in table order for INSERT ... SELECT, so the values follow that order.
  const values = Object.keys(getTableColumns(table)).map((k) => sql`${(row as Record<string, unknown>)[k] ?? null}`);
  return db.insert(table).select(sql`SELECT ${sql.join(values, sql`, `)} WHERE ${condition}`);
}
