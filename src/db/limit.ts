/**
 * A LIMIT written into a statement's text instead of bound as a parameter. D1 keeps compiled statements by
 * their text, so a statement whose text repeats is not compiled again; but SQLite reads a bound LIMIT's value
 * while planning, and binding it marks the statement for a full recompile at its next step: on every call,
 * since every call binds. For the statements a turn or a search runs each time (measured on the lessons
 * recall: ~0.5 ms of CPU per call, docs/lessons.md). Only a non-negative safe integer is ever written in.
 */
import { type SQL, sql } from "drizzle-orm";

export function literalLimit(n: number): SQL {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`a LIMIT must be a non-negative integer, got ${n}`);
  return sql.raw(String(n));
}

/**
 * `literalLimit` for drizzle's query builder: its `.limit()` is typed for numbers, but it writes an SQL value
 * into the statement as it is (`.limit(builderLimit(n))` renders `limit n`). The one cast lives here.
 */
export const builderLimit = (n: number): number => literalLimit(n) as unknown as number;
