/**
 * Atomic D1 batches of drizzle builders and raw `sql` alike. (drizzle's own `batch` cannot take raw
 * statements with parameters, and this code needs `json_each` bulk writes inside its transactions.)
 */
import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "../db/client";

const dialect = new SQLiteAsyncDialect();

export type Statement = SQL | { toSQL(): { sql: string; params: unknown[] } };

const toQuery = (s: Statement) => ("toSQL" in s ? s.toSQL() : dialect.sqlToQuery(s));

/** Runs statements as one D1 batch (one transaction: all or nothing); results in statement order. */
export async function runBatch(db: Db, items: readonly Statement[]): Promise<D1Result[]> {
  if (!items.length) return [];
  const d1 = db.$client;
  return d1.batch(
    items.map((s) => {
      const q = toQuery(s);
      return d1.prepare(q.sql).bind(...q.params);
    }),
  );
}

/** The `id`s of a `RETURNING id` statement's result. */
export const returnedIds = (result: D1Result | undefined): string[] =>
  (result?.results ?? []).flatMap((r: unknown) => (r && typeof r === "object" && "id" in r && typeof r.id === "string" ? [r.id] : []));

/** Rows changed by a statement. */
export const changes = (result: D1Result | undefined): number => result?.meta.changes ?? 0;
