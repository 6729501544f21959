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
 * 2. `copyUser` (move-copy.ts): the user's rows on the target are cleared (what an earlier, failed attempt left), then every
 *    user-owned table is copied in pages of bounded statements, each insert returning what the target stored.
 * 3. `verifyCopy` (move-copy.ts): rows, bytes and a checksum per table, read on both sides, must agree.
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
import { clearStatements, copyUser, verifyCopy } from "./move-copy";
import { counted, type Move, type TableTally } from "./move-d1";

type Env = { DB: D1Database };

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
