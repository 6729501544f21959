/**
 * What the steps of a move (move.ts) share: the move itself, its D1 calls (counted for the report), and how a table's
 * rows are compared on two shards: each row as SQLite's `quote` of every value, hashed into a checksum per table.
 */
import { MOVED_TABLES, type MovedTable } from "./move-tables";

type Env = { DB: D1Database };

/** A move under way: who, from which shard to which, and the D1 calls it has made so far. */
export type Move = { env: Env; userId: string; from: number; to: number; calls: { n: number; statements: number } };

/** A table's rows as one shard holds them: how many, their size as compared, and their checksum. */
export type TableTally = { rows: number; bytes: number; checksum: string };

export const quoted = (c: string) => `"${c}"`;
/** One row as text that differs when any value or its type differs (SQLite's `quote`), the same on both sides. */
export const canonical = (t: MovedTable) => t.columns.map((c) => `quote(${quoted(c)})`).join(" || ',' || ");

/** An order-independent 64-bit checksum of a table's canonical rows: two FNV-1a hashes per row, summed. */
export class Checksum {
  private a = 0;
  private b = 0;
  add(text: string): void {
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
    }
    this.a = (this.a + (h1 >>> 0)) >>> 0;
    this.b = (this.b + (h2 >>> 0)) >>> 0;
  }
  toString(): string {
    return this.a.toString(16).padStart(8, "0") + this.b.toString(16).padStart(8, "0");
  }
}

export const EMPTY: TableTally = { rows: 0, bytes: 0, checksum: new Checksum().toString() };

/**
 * How many rows of the user each moved table holds on a shard, in one statement of one row (the user id is its one
 * parameter; D1 refuses a compound SELECT of this many terms).
 */
export async function rowCounts(db: D1Calls, userId: string): Promise<Map<string, number>> {
  const columns = MOVED_TABLES.map((t) => `(SELECT count(*) FROM ${quoted(t.name)} WHERE user_id = ?1) AS ${quoted(t.name)}`).join(", ");
  const row = await db.first<Record<string, number>>(`SELECT ${columns}`, userId);
  return new Map(Object.entries(row ?? {}));
}

/** A shard's D1 binding, each call counted on the move (a batch once, with its statements). */
export type D1Calls = ReturnType<typeof counted>;

export function counted(move: Move, d1: D1Database) {
  const prepare = (sql: string, ...binds: unknown[]) => d1.prepare(sql).bind(...binds);
  /** One statement on its own: one call. */
  const one = (sql: string, binds: unknown[]) => {
    move.calls.n++;
    move.calls.statements++;
    return prepare(sql, ...binds);
  };
  return {
    first: <T>(sql: string, ...binds: unknown[]) => one(sql, binds).first<T>(),
    all: async <T>(sql: string, ...binds: unknown[]) => (await one(sql, binds).all<T>()).results,
    run: async (sql: string, ...binds: unknown[]) => (await one(sql, binds).run()).meta.changes,
    batch: (statements: D1PreparedStatement[]) => {
      move.calls.n++;
      move.calls.statements += statements.length;
      return d1.batch(statements);
    },
    prepare,
  };
}
