/**
 * Moving a user to another shard while engram runs (docs/scaling.md, "Moving a user"). The steps, and why each is
 * safe to fail at:
 *
 * 1. `beginMove`: the directory marks the user `moving_to` (one guarded statement: a second move of the same user
 *    finds the mark and is refused), and the old shard's user row is fenced (`fence` = 1; for a user on shard 0
 *    both happen in the one statement, the directory being shard 0). From the mark on, every request that looks
 *    the user up answers a write with 503 `user_moving` and `Retry-After`, and queue messages of the user wait;
 *    reads keep being served from the old shard. A request or consolidation that looked the user up before the
 *    mark may still try to write: from the fence on, triggers refuse those writes inside the statement
 *    (migration 0027), so no write lands on the old shard after the copy read it.
 * 2. `copyUser`: the user's rows on the target are cleared (what an earlier, failed attempt left), then every
 *    user-owned table is copied in pages of bounded statements, each insert returning what the target stored.
 * 3. `verifyCopy`: rows, bytes and a checksum per table, read on both sides, must agree.
 * 4. `switchShard`: the directory names the target as the user's shard in one guarded statement (reads go there
 *    from now on) and keeps the mark on, now naming the old shard; `purgeOld` deletes the old rows in one batch
 *    and the mark is cleared. Writes resume, on the target.
 *
 * A failure in steps 2-3 rolls back (`abandonMove`): the target's copy is deleted, the fence lifted, the mark
 * cleared; the user is whole on the old shard. A failure after the switch leaves the user on the target with
 * writes paused; the old rows are still fenced, and the same move asked again with `resume` finishes it. A crash
 * (the Worker stopped mid-move) leaves the mark, and `resume` picks the move up where the directory says it is.
 *
 * Vectors do not move: Vectorize namespaces are per user within one index (src/memory/vector-vectorize.ts), not
 * per shard. The local index (wrangler dev, tests) lives in D1, so its tables move with the rest.
 */
import { placementOf, shardCount, shardD1 } from "../db/shards";
import { AppError, notFound } from "../lib/errors";
import { EMPTY_TIERS, MOVED_TABLES, type MovedTable, NOT_MOVED, USER_ROW } from "./move-tables";

type Env = { DB: D1Database };

/** Rows read from the old shard per query: a page of the biggest rows (per-turn audit rows, about 8 kB) stays near 2 MB. */
const PAGE_ROWS = 250;
/** D1 binds at most 100 parameters per statement. */
const MAX_PARAMS = 100;

export type TableTally = { rows: number; bytes: number; checksum: string };
export type MoveReport = {
  user_id: string;
  from: number;
  to: number;
  tables: Record<string, TableTally>;
  rows: number;
  /** D1 calls the move made (a batch counts once), the SQL statements they carried, and how long it took. */
  round_trips: number;
  statements: number;
  ms: number;
};

/** A move under way: who, from which shard to which, and the D1 calls it has made so far. */
export type Move = { env: Env; userId: string; from: number; to: number; calls: { n: number; statements: number } };

const quoted = (c: string) => `"${c}"`;
/** One row as text that differs when any value or its type differs (SQLite's `quote`), the same on both sides. */
const canonical = (t: MovedTable) => t.columns.map((c) => `quote(${quoted(c)})`).join(" || ',' || ");

/** An order-independent 64-bit checksum of a table's canonical rows: two FNV-1a hashes per row, summed. */
class Checksum {
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

function counted(move: Move, d1: D1Database) {
  return {
    first: <T>(sql: string, ...binds: unknown[]) => {
      move.calls.n++;
      move.calls.statements++;
      return d1
        .prepare(sql)
        .bind(...binds)
        .first<T>();
    },
    all: async <T>(sql: string, ...binds: unknown[]) => {
      move.calls.n++;
      move.calls.statements++;
      return (
        await d1
          .prepare(sql)
          .bind(...binds)
          .all<T>()
      ).results;
    },
    run: async (sql: string, ...binds: unknown[]) => {
      move.calls.n++;
      move.calls.statements++;
      return (
        await d1
          .prepare(sql)
          .bind(...binds)
          .run()
      ).meta.changes;
    },
    batch: (statements: D1PreparedStatement[]) => {
      move.calls.n++;
      move.calls.statements += statements.length;
      return d1.batch(statements);
    },
    prepare: (sql: string, ...binds: unknown[]) => d1.prepare(sql).bind(...binds),
  };
}

/**
 * Step 1. Refuses a move that cannot start (unknown user, the shard they are on, an unbound shard, a move of the
 * user under way), changing nothing; with `resume`, takes over the unfinished move to `to` the directory shows.
 * Returns the move, and whether it is already past the switch (only the old rows are left to delete).
 */
export async function beginMove(env: Env, userId: string, to: number, resume = false): Promise<{ move: Move; switched: boolean }> {
  const count = shardCount(env);
  if (!Number.isInteger(to) || to < 0 || to >= count)
    throw new AppError("invalid_request", `shard must be below ${count}: this deployment binds ${count} shard(s)`);
  const placed = await placementOf(env, userId);
  if (!placed) throw notFound("user");
  const calls = { n: 1, statements: 1 };
  if (placed.movingTo !== null) {
    // An unfinished move: copying (shard = from, moving_to = to; the user's row on `from` is fenced) or deleting
    // the old rows (shard = to, moving_to = from; the row on `to` is not). Read as the latter when the Worker
    // stopped between the mark and the fence, finishing it clears the mark and deletes what the target holds:
    // the user stays where they are, whole. Only the same move, asked to resume, may take it over.
    const row = await counted({ env, userId, from: 0, to, calls }, shardD1(env, placed.shard)).first<{ fence: number | null }>(
      "SELECT fence FROM users WHERE id = ?",
      userId,
    );
    const copying = row?.fence === 1;
    const [from, target] = copying ? [placed.shard, placed.movingTo] : [placed.movingTo, placed.shard];
    if (!resume || to !== target)
      throw new AppError(
        "conflict",
        `a move of this user is under way (the directory shows shard ${placed.shard}, moving to ${placed.movingTo}); if it stopped, ask again with {"shard": ${target}, "resume": true}`,
      );
    return { move: { env, userId, from, to, calls }, switched: !copying };
  }
  if (placed.shard === to) throw new AppError("conflict", `the user is already on shard ${to}`);
  const move = { env, userId, from: placed.shard, to, calls };
  // On shard 0 the directory's row is the shard's row: marking fences it in the same statement. A target of 0 has
  // the directory's row as its user row: its fence, left by an earlier move away, is lifted for the copy.
  const marked = await counted(move, env.DB).run(
    `UPDATE users SET moving_to = ?1, fence = CASE WHEN ?2 = 0 THEN 1 WHEN ?1 = 0 THEN NULL ELSE fence END
     WHERE id = ?3 AND shard = ?2 AND moving_to IS NULL`,
    to,
    move.from,
    userId,
  );
  if (!marked) throw new AppError("conflict", "another move of this user started at the same time");
  if (move.from !== 0) await fence(move);
  return { move, switched: false };
}

async function fence(move: Move) {
  await counted(move, shardD1(move.env, move.from)).run("UPDATE users SET fence = 1 WHERE id = ?", move.userId);
}

/**
 * Deletes the user's rows from `shard` in one batch (all or nothing). `keepUserRow`: the directory's row (shard 0)
 * stays, its tiers emptied; else the shard's user row goes too. `fenceAfter`: the fence the row keeps (2: the
 * user's rows were moved away and must not come back; null: lifted).
 */
function clearStatements(d1: ReturnType<typeof counted>, userId: string, keepUserRow: boolean, fenceAfter: 2 | null) {
  const tiers = Object.keys(EMPTY_TIERS)
    .map((c, i) => `${quoted(c)} = ?${i + 3}`)
    .join(", ");
  // Skipped when the fence is already what it should be: the tiers were emptied by the batch that set it.
  const open = d1.prepare(
    `UPDATE users SET fence = ?1, ${tiers} WHERE id = ?2 AND (fence IS NULL OR fence IS NOT ?1)`,
    fenceAfter,
    userId,
    ...Object.values(EMPTY_TIERS),
  );
  const tables = [...MOVED_TABLES].reverse().map((t) => t.name);
  return [
    // Deletes pass a fence of 2 or none: set first, in the same transaction as the deletes.
    keepUserRow ? open : d1.prepare("UPDATE users SET fence = ? WHERE id = ? AND fence IS NOT NULL", fenceAfter, userId),
    ...[...tables, ...Object.keys(NOT_MOVED).filter((t) => t !== "api_keys")].map((t) => d1.prepare(`DELETE FROM ${quoted(t)} WHERE user_id = ?`, userId)),
    ...(keepUserRow ? [] : [d1.prepare("DELETE FROM users WHERE id = ?", userId)]),
  ];
}

/** Step 2: copies every row of the user from the old shard to the target; returns what the target stored, per table. */
export async function copyUser(move: Move): Promise<Record<string, TableTally>> {
  const { env } = move;
  const src = counted(move, shardD1(env, move.from));
  const dst = counted(move, shardD1(env, move.to));
  await dst.batch(clearStatements(dst, move.userId, move.to === 0, null));
  const tallies: Record<string, TableTally> = {};
  tallies.users = await copyUserRow(move, src, dst);
  const held = await rowCounts(src, move.userId);
  for (const table of MOVED_TABLES) tallies[table.name] = held.get(table.name) ? await copyTable(move.userId, table, src, dst) : EMPTY;
  return tallies;
}

async function copyUserRow(move: Move, src: ReturnType<typeof counted>, dst: ReturnType<typeof counted>): Promise<TableTally> {
  const cols = USER_ROW.columns;
  const row = await src.first<Record<string, unknown>>(`SELECT ${cols.map(quoted).join(", ")} FROM users WHERE id = ?`, move.userId);
  if (!row) throw new Error(`shard ${move.from} holds no user row for the user`);
  const values = cols.map((c) => row[c]);
  const canon = canonical(USER_ROW);
  // Shard 0's user row is the directory's: it exists, and takes the tiers; elsewhere the row is new.
  const stored =
    move.to === 0
      ? await dst.first<{ canon: string }>(
          `UPDATE users SET ${cols
            .filter((c) => c !== "id")
            .map((c) => `${quoted(c)} = ?`)
            .join(", ")} WHERE id = ? RETURNING ${canon} AS canon`,
          ...values.filter((_, i) => cols[i] !== "id"),
          move.userId,
        )
      : await dst.first<{ canon: string }>(
          `INSERT INTO users (${cols.map(quoted).join(", ")}) VALUES (${cols.map(() => "?").join(", ")}) RETURNING ${canon} AS canon`,
          ...values,
        );
  if (!stored) throw new Error(`shard ${move.to} did not store the user row`);
  const sum = new Checksum();
  sum.add(stored.canon);
  return { rows: 1, bytes: stored.canon.length, checksum: sum.toString() };
}

/**
 * Copies one table: pages read by rowid (insertion order, so revisions keep their order, migration 0020), each
 * page written as one batch of multi-row inserts within D1's parameter limit. Rowids are not copied: the target
 * gives its own, and its full-text triggers index the rows under them.
 */
async function copyTable(userId: string, table: MovedTable, src: ReturnType<typeof counted>, dst: ReturnType<typeof counted>): Promise<TableTally> {
  const cols = table.columns.map(quoted).join(", ");
  const perInsert = Math.max(1, Math.floor(MAX_PARAMS / table.columns.length));
  const canon = canonical(table);
  const sum = new Checksum();
  let rows = 0;
  let bytes = 0;
  let after = -1;
  for (;;) {
    const page = await src.all<Record<string, unknown> & { __rowid: number }>(
      `SELECT rowid AS __rowid, ${cols} FROM ${quoted(table.name)} WHERE user_id = ? AND rowid > ? ORDER BY rowid LIMIT ${PAGE_ROWS}`,
      userId,
      after,
    );
    if (!page.length) break;
    const inserts: D1PreparedStatement[] = [];
    for (let i = 0; i < page.length; i += perInsert) {
      const chunk = page.slice(i, i + perInsert);
      const placeholders = chunk.map(() => `(${table.columns.map(() => "?").join(", ")})`).join(", ");
      inserts.push(
        dst.prepare(
          `INSERT INTO ${quoted(table.name)} (${cols}) VALUES ${placeholders} RETURNING ${canon} AS canon`,
          ...chunk.flatMap((r) => table.columns.map((c) => r[c] ?? null)),
        ),
      );
    }
    for (const result of await dst.batch(inserts))
      for (const r of result.results as { canon: string }[]) {
        sum.add(r.canon);
        rows++;
        bytes += r.canon.length;
      }
    after = page[page.length - 1]?.__rowid ?? after;
    if (page.length < PAGE_ROWS) break;
  }
  return { rows, bytes, checksum: sum.toString() };
}

/**
 * Step 3: reads rows, bytes and checksum of every table on both sides and compares them with what the copy stored.
 * Throws on the first difference.
 */
export async function verifyCopy(move: Move, copied: Record<string, TableTally>): Promise<void> {
  const { env } = move;
  const [before, after] = await Promise.all([tallyOn(move, shardD1(env, move.from)), tallyOn(move, shardD1(env, move.to))]);
  for (const [name, stored] of Object.entries(copied)) {
    const a = before[name];
    const b = after[name];
    if (!a || !b || a.rows !== stored.rows || b.rows !== stored.rows || a.checksum !== stored.checksum || b.checksum !== stored.checksum)
      throw new Error(
        `${name}: the old shard holds ${a?.rows} rows (checksum ${a?.checksum}), the new one ${b?.rows} (${b?.checksum}), the copy stored ${stored.rows} (${stored.checksum})`,
      );
  }
}

const EMPTY: TableTally = { rows: 0, bytes: 0, checksum: new Checksum().toString() };

/**
 * How many rows of the user each moved table holds on a shard, in one statement of one row (the user id is its one
 * parameter; D1 refuses a compound SELECT of this many terms).
 */
async function rowCounts(db: ReturnType<typeof counted>, userId: string): Promise<Map<string, number>> {
  const columns = MOVED_TABLES.map((t) => `(SELECT count(*) FROM ${quoted(t.name)} WHERE user_id = ?1) AS ${quoted(t.name)}`).join(", ");
  const row = await db.first<Record<string, number>>(`SELECT ${columns}`, userId);
  return new Map(Object.entries(row ?? {}));
}

/** Every table's tally of the user's rows on one shard, computed from the rows that shard returns (empty tables counted only). */
async function tallyOn(move: Move, d1: D1Database): Promise<Record<string, TableTally>> {
  const db = counted(move, d1);
  const held = await rowCounts(db, move.userId);
  const out: Record<string, TableTally> = {};
  for (const table of [USER_ROW, ...MOVED_TABLES]) {
    if (table !== USER_ROW && !held.get(table.name)) {
      out[table.name] = EMPTY;
      continue;
    }
    const sum = new Checksum();
    let rows = 0;
    let bytes = 0;
    const key = table === USER_ROW ? "id" : "user_id";
    let after = -1;
    for (;;) {
      const page = await db.all<{ canon: string; __rowid: number }>(
        `SELECT rowid AS __rowid, ${canonical(table)} AS canon FROM ${quoted(table.name)} WHERE ${key} = ? AND rowid > ? ORDER BY rowid LIMIT ${PAGE_ROWS * 4}`,
        move.userId,
        after,
      );
      for (const r of page) {
        sum.add(r.canon);
        rows++;
        bytes += r.canon.length;
      }
      after = page.at(-1)?.__rowid ?? after;
      if (page.length < PAGE_ROWS * 4) break;
    }
    out[table.name] = { rows, bytes, checksum: sum.toString() };
  }
  return out;
}

/** Step 4: the directory names the target as the user's shard; writes stay paused until the old rows are gone. */
export async function switchShard(move: Move): Promise<void> {
  const switched = await counted(move, move.env.DB).run(
    "UPDATE users SET shard = ?1, moving_to = ?2 WHERE id = ?3 AND shard = ?2 AND moving_to = ?1",
    move.to,
    move.from,
    move.userId,
  );
  if (!switched) throw new Error("the directory no longer shows this move: the user was changed meanwhile");
}

/** Step 5: deletes the user's rows from the old shard (fence 2 stays: nothing of theirs is written there again), then clears the mark. */
export async function purgeOld(move: Move): Promise<void> {
  const { env } = move;
  const old = counted(move, shardD1(env, move.from));
  await old.batch(clearStatements(old, move.userId, move.from === 0, 2));
  await counted(move, env.DB).run("UPDATE users SET moving_to = NULL WHERE id = ?1 AND shard = ?2 AND moving_to = ?3", move.userId, move.to, move.from);
}

/** Rolls a move back before its switch: the target's copy goes, the fence is lifted, the mark cleared. */
export async function abandonMove(move: Move): Promise<void> {
  const { env } = move;
  const dst = counted(move, shardD1(env, move.to));
  await dst.batch(clearStatements(dst, move.userId, move.to === 0, null));
  if (move.from !== 0) await counted(move, shardD1(env, move.from)).run("UPDATE users SET fence = NULL WHERE id = ?", move.userId);
  await counted(move, env.DB).run(
    "UPDATE users SET moving_to = NULL, fence = CASE WHEN shard = 0 THEN NULL ELSE fence END WHERE id = ?1 AND shard = ?2 AND moving_to = ?3",
    move.userId,
    move.from,
    move.to,
  );
}

/** The whole move (steps 1-5), or its resumption; see the top of this file. */
export async function moveUser(env: Env, userId: string, to: number, options: { resume?: boolean; now?: () => number } = {}): Promise<MoveReport> {
  const now = options.now ?? Date.now;
  const started = now();
  const { move, switched } = await beginMove(env, userId, to, options.resume);
  let tables: Record<string, TableTally> = {};
  if (!switched) {
    try {
      tables = await copyUser(move);
      await verifyCopy(move, tables);
    } catch (err) {
      await abandonMove(move).catch(() => undefined);
      throw new AppError("internal", `the move failed before the switch and was rolled back: the user stays on shard ${move.from}, unchanged`, String(err));
    }
    await switchShard(move);
  }
  try {
    await purgeOld(move);
  } catch (err) {
    throw new AppError(
      "internal",
      `the user now lives on shard ${move.to}, but deleting their old rows on shard ${move.from} failed: their writes stay paused until the move is asked again with "resume": true`,
      String(err),
    );
  }
  const rows = Object.values(tables).reduce((n, t) => n + t.rows, 0);
  return { user_id: userId, from: move.from, to: move.to, tables, rows, round_trips: move.calls.n, statements: move.calls.statements, ms: now() - started };
}
