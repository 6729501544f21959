/**
 * `column IN (...)` over one JSON parameter. D1 allows at most 100 bound parameters a statement, so an
 * `IN` list with one parameter per value fails once a list grows past that.
 */
import { type AnyColumn, type SQL, sql } from "drizzle-orm";

export const inJson = (column: AnyColumn | SQL, values: readonly (string | number)[]) =>
  sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
