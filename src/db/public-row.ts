/**
 * A row as the API answers with it: drizzle's camelCase column names in snake_case. Each answer names the
 * columns it shows, in the order it shows them (JSON keeps that order), so a column added to a table never
 * reaches an answer by accident, and owner ids and internal copies stay out.
 */

/** `eventType` -> `event_type`, at the type level (the answer's field names are checked against its schema). */
export type SnakeCase<S extends string> = S extends `${infer C}${infer Rest}` ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<Rest>}` : S;

export type SnakeRow<T, K extends keyof T & string> = { [P in K as SnakeCase<P>]: T[P] };

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The named columns of `row`, in order, under snake_case names. */
export function snakeRow<T extends object, const K extends keyof T & string>(row: T, columns: readonly K[]): SnakeRow<T, K> {
  const out: Record<string, unknown> = {};
  for (const column of columns) out[snakeCase(column)] = row[column];
  return out as SnakeRow<T, K>;
}
