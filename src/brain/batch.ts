import { and, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../db/client";
import { AppError } from "../http/errors";

type Item = BatchItem<"sqlite">;

/** D1 runs a batch as one transaction: every statement applies, or none does. */
export function runBatch(db: Db, first: Item, ...rest: Item[]) {
  return db.batch([first, ...rest]);
}

/** True when a statement failed on a UNIQUE, FOREIGN KEY or NOT NULL constraint (drizzle wraps the D1 error). */
export function isConstraintError(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (/constraint failed/i.test(e.message)) return true;
  }
  return false;
}

/** Runs a write batch whose statements are guarded by constraints; a violation means someone else wrote first. */
export async function runGuarded(db: Db, conflictMessage: string, first: Item, ...rest: Item[]) {
  try {
    return await runBatch(db, first, ...rest);
  } catch (err) {
    if (isConstraintError(err)) throw new AppError("conflict", conflictMessage);
    throw err;
  }
}

/** Every condition (none: true). */
export const allOf = (...conditions: (SQL | undefined)[]): SQL => and(...conditions) ?? sql`1`;

/** How many rows a batch statement without RETURNING changed. */
export const changes = (result: { meta: { changes: number } } | undefined): number => result?.meta.changes ?? 0;
