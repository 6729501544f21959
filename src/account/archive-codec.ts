/**
 * A table row as an archive record and back, derived from the drizzle columns (one schema): a record's fields are
 * the columns' snake_case names, the owner left out; its validator follows each column's type, enum and nullability.
 */
import { z } from "@hono/zod-openapi";
import { getTableColumns, is, SQL } from "drizzle-orm";
import { SQLiteAsyncDialect, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";

/** A source id: what an id of any engram table looks like (prefixed random, uuid, content hash, site slug). */
export const SourceId = z.string().regex(/^[\w.:-]{1,100}$/, "an id of letters, digits and . _ : -");

/**
 * JSON columns hold objects, except those whose default is an empty array and `events` (a transcript segment's
 * parsed events): the database code reads them as such, so an archive may not put a string or null there.
 */
const ARRAY_COLUMNS_WITHOUT_DEFAULT = new Set(["events"]);
const dialect = new SQLiteAsyncDialect();
const holdsArray = (col: SQLiteColumn) =>
  ARRAY_COLUMNS_WITHOUT_DEFAULT.has(col.name) || (is(col.default, SQL) && dialect.sqlToQuery(col.default).sql === "'[]'");

type Columns = Readonly<Record<string, SQLiteColumn>>;

/** A table's columns by their snake_case names, the owner column left out. */
export function recordColumns(table: SQLiteTable): Record<string, SQLiteColumn> {
  const out: Record<string, SQLiteColumn> = {};
  for (const col of Object.values(getTableColumns(table))) if (col.name !== "user_id") out[col.name] = col;
  return out;
}

function columnSchema(col: SQLiteColumn, isId: boolean): z.ZodType {
  const enumValues = col.enumValues as [string, ...string[]] | undefined;
  let s: z.ZodType;
  if (isId) s = col.columnType === "SQLiteTextJson" ? z.array(SourceId) : SourceId;
  else if (col.columnType === "SQLiteTextJson") s = holdsArray(col) ? z.array(z.json()) : z.record(z.string(), z.json());
  else if (col.columnType === "SQLiteBoolean") s = z.boolean();
  else if (col.columnType === "SQLiteInteger") s = z.number().int();
  else if (col.columnType === "SQLiteReal") s = z.number();
  else s = enumValues?.length ? z.enum(enumValues) : z.string();
  if (!col.notNull) s = s.nullable();
  // An older archive may lack a column added since: the database default then applies.
  return col.notNull && !col.hasDefault ? s : s.optional();
}

/** The validator of one kind's records (`kind` excluded): unknown fields are refused. */
export function recordSchema(columns: Columns, idColumns: readonly string[]) {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, col] of Object.entries(columns)) shape[name] = columnSchema(col, idColumns.includes(name));
  return z.strictObject(shape);
}

/** A selected row (drizzle's decoded values, camelCase keys) as a record's fields. */
export function rowToRecord(table: SQLiteTable, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, col] of Object.entries(getTableColumns(table))) if (col.name !== "user_id") out[col.name] = row[key] ?? null;
  return out;
}

/** A record's value as SQLite stores it (JSON columns as their text, booleans as 0/1), for a json_each insert. */
export function storedValue(col: SQLiteColumn, value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (col.columnType === "SQLiteTextJson") return JSON.stringify(value);
  if (typeof value === "boolean") return value ? 1 : 0;
  return value as string | number;
}
