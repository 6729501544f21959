/**
 * Steps 2 and 3 of a move (move.ts): copy every row of the user to the target shard in bounded batches, then read
 * both shards and compare what they hold, table by table.
 */
import { shardD1 } from "../db/shards";
import { Checksum, canonical, counted, type D1Calls, EMPTY, type Move, quoted, rowCounts, type TableTally } from "./move-d1";
import { EMPTY_TIERS, MOVED_TABLES, type MovedTable, NOT_MOVED, USER_ROW } from "./move-tables";

/** Rows read from the old shard per query: a page of the biggest rows (per-turn audit rows, about 8 kB) stays near 2 MB. */
const PAGE_ROWS = 250;
/** D1 binds at most 100 parameters per statement. */
const MAX_PARAMS = 100;

/**
 * Deletes the user's rows from `shard` in one batch (all or nothing). `keepUserRow`: the directory's row (shard 0)
 * stays, its tiers emptied; else the shard's user row goes too. `fenceAfter`: the fence the row keeps (2: the
 * user's rows were moved away and must not come back; null: lifted).
 */
export function clearStatements(d1: D1Calls, userId: string, keepUserRow: boolean, fenceAfter: 2 | null) {
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

async function copyUserRow(move: Move, src: D1Calls, dst: D1Calls): Promise<TableTally> {
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
async function copyTable(userId: string, table: MovedTable, src: D1Calls, dst: D1Calls): Promise<TableTally> {
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
