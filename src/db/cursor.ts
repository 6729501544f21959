/**
 * Keyset pagination, newest first, by (timestamp, id). Rows can share a millisecond, so the cursor carries
 * both: a page never skips or repeats a row.
 */
import { and, desc, eq, lt, or, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteSelect } from "drizzle-orm/sqlite-core";
import { z } from "zod";

export const CursorParam = z
  .string()
  .regex(/^\d+:[\w-]+$/, "a cursor from the previous page's next_before")
  .optional()
  .describe("Opaque cursor from the previous page's next_before");

export const cursorOf = (at: number, id: string) => `${at}:${id}`;

/** The condition for rows after `cursor` in (at desc, id desc) order. */
export function afterCursor(atCol: SQLiteColumn, idCol: SQLiteColumn, cursor: string | undefined): SQL | undefined {
  if (!cursor) return undefined;
  const sep = cursor.indexOf(":");
  const at = Number(cursor.slice(0, sep));
  return or(lt(atCol, at), and(eq(atCol, at), lt(idCol, cursor.slice(sep + 1))));
}

/** A list's order: its time column and its id column, both descending. */
export type Keyset = { at: SQLiteColumn; id: SQLiteColumn };

/** What one page asks for: the rows matching `where` (undefined: all), after `before`, at most `limit`. */
export type PageQuery = { where?: SQL; before?: string; limit: number };

/**
 * One page of a list, newest first. `query` is `db.select(...).from(table).$dynamic()`; the page adds its
 * where, order and limit, so every list pages the same way (and `nextCursor` continues it).
 */
export function newestFirst<Q extends SQLiteSelect>(query: Q, keys: Keyset, page: PageQuery) {
  return query
    .where(and(page.where, afterCursor(keys.at, keys.id, page.before)))
    .orderBy(desc(keys.at), desc(keys.id))
    .limit(page.limit);
}

/** `next_before` of a page: the last row's cursor when the page is full. */
export function nextCursor<T>(rows: readonly T[], limit: number, key: (row: T) => [number, string]): string | null {
  const last = rows.at(-1);
  return rows.length === limit && last ? cursorOf(...key(last)) : null;
}
