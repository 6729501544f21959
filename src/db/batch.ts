/**
 * D1 batches. D1 runs a batch as one transaction: every statement applies, or none does.
 * - `runBatch`: drizzle builders, with drizzle's typed results (e.g. `.returning()` rows).
 * - `runStatements`: builders and raw `sql` alike (drizzle's own batch cannot take raw statements with
 *   parameters, e.g. `json_each` bulk writes), with D1's raw results.
 */
import { and, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";
import { LostRace } from "./race";

type Item = BatchItem<"sqlite">;

export function runBatch(db: Db, first: Item, ...rest: Item[]) {
  return db.batch([first, ...rest]);
}

const dialect = new SQLiteAsyncDialect();

export type Statement = SQL | { toSQL(): { sql: string; params: unknown[] } };

export const toQuery = (s: Statement) => ("toSQL" in s ? s.toSQL() : dialect.sqlToQuery(s));

/** A statement as stored text and parameters, run again later (e.g. on another shard holding the same tables). */
export type StoredStatement = { sql: string; params: unknown[] };
export const storedStatement = (s: Statement): StoredStatement => {
  const q = toQuery(s);
  return { sql: q.sql, params: q.params };
};
export const fromStored = (s: StoredStatement): Statement => ({ toSQL: () => s });

export async function runStatements(db: Db, items: readonly Statement[]): Promise<D1Result[]> {
  if (!items.length) return [];
  const d1 = db.$client;
  return d1.batch(
    items.map((s) => {
      const q = toQuery(s);
      return d1.prepare(q.sql).bind(...q.params);
    }),
  );
}

/**
 * True when a statement failed on a UNIQUE, FOREIGN KEY or NOT NULL constraint (drizzle wraps the D1
 * error), or on a trigger that refuses a row in the same words (`memory_runs`' revision order, migration 0020),
 * of `table` when given. The one place engram reads constraint failures.
 */
export function isConstraintError(err: unknown, table?: string): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (/constraint failed/i.test(e.message) && (!table || e.message.includes(`${table}.`))) return true;
  }
  return false;
}

/** Runs a write batch whose statements are guarded by constraints; a violation means someone else wrote first (`LostRace`). */
export async function runGuarded(db: Db, conflictMessage: string, first: Item, ...rest: Item[]) {
  try {
    return await runBatch(db, first, ...rest);
  } catch (err) {
    if (isConstraintError(err)) throw new LostRace(conflictMessage);
    throw err;
  }
}

/** Every condition (none: true). */
export const allOf = (...conditions: (SQL | undefined)[]): SQL => and(...conditions) ?? sql`1`;

/** Rows a statement without RETURNING changed. D1 counts trigger writes (FTS) too: count with RETURNING where that matters. */
export const changes = (result: { meta: { changes: number } } | undefined): number => result?.meta.changes ?? 0;

/** The `id`s of a raw `RETURNING id` statement's result. */
export const returnedIds = (result: D1Result | undefined): string[] =>
  (result?.results ?? []).flatMap((r: unknown) => (r && typeof r === "object" && "id" in r && typeof r.id === "string" ? [r.id] : []));
