/**
 * Which D1 database holds what. The directory (binding `DB`) holds what is global: users, API keys and each
 * user's shard (`users.shard`). Shards hold every user-owned row; shard 0 is the same `DB` database, shards
 * 1..N-1 are the bindings `SHARD_1`, `SHARD_2`... (no gaps). A deployment with one database is the N=1 case of
 * the same code. Each shard also holds a `users` row for each of its users: the memory tiers live in it and it
 * anchors the foreign keys (deleting it cascades the user's rows); identity (name, email, plan, keys) is read
 * from the directory only, so nothing joins users or api_keys with user-owned tables.
 *
 * Domain code takes a `Db` and never asks which one: the composition (HTTP middleware, queue, cron, session
 * object) picks it here.
 */
import { eq, sql } from "drizzle-orm";
import { AppError } from "../lib/errors";
import { createDb, type Db } from "./client";
import { inJson } from "./in-json";
import { users } from "./schema";

/**
 * One drizzle handle per D1 binding for the isolate's life: building one walks the whole schema for its
 * relational config, work a request need not repeat (the handle keeps no per-request state).
 */
const handles = new WeakMap<D1Database, Db>();

/** What routing needs of the Worker's environment: the directory binding (the `SHARD_n` ones are found by name). */
type Env = { DB: D1Database };
export const dbOf = (d1: D1Database): Db => {
  let db = handles.get(d1);
  if (!db) handles.set(d1, (db = createDb(d1)));
  return db;
};

/** The shards' D1 bindings, in shard order: `DB`, then `SHARD_1`, `SHARD_2`... up to the first missing one. */
export function shardBindings(env: Env): D1Database[] {
  const all = env as unknown as Record<string, D1Database | undefined>;
  const out = [env.DB];
  for (let i = 1; all[`SHARD_${i}`]; i++) out.push(all[`SHARD_${i}`] as D1Database);
  return out;
}

export const shardCount = (env: Env) => shardBindings(env).length;

export const directoryOf = (env: Env): Db => dbOf(env.DB);

/** Shard `index`'s D1 binding; an index the deployment no longer binds is a configuration fault, never a silent fallback. */
export function shardD1(env: Env, index: number): D1Database {
  const d1 = shardBindings(env)[index];
  if (!d1) throw new AppError("config_error", `shard ${index} is not bound (SHARD_${index} is missing from the configuration)`);
  return d1;
}

export const shardDb = (env: Env, index: number): Db => dbOf(shardD1(env, index));

/**
 * Where a new user goes: a stable hash (FNV-1a) of the id over the shards bound now. The choice is recorded in
 * the directory, so binding more shards sends new users to them and moves no one.
 */
export function placeUser(userId: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < userId.length; i++) h = Math.imul(h ^ userId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % count;
}

/** A user's place in the directory: their shard, and the shard they are moving to while a move runs. */
export type Placement = { shard: number; movingTo: number | null };

/** The placements of many users in one directory read (users the directory does not know are absent). */
export async function placementsOf(env: Env, userIds: readonly string[]): Promise<Map<string, Placement>> {
  if (!userIds.length) return new Map();
  const rows = await directoryOf(env)
    .select({ id: users.id, shard: users.shard, movingTo: users.movingTo })
    .from(users)
    .where(inJson(users.id, [...new Set(userIds)]))
    .all();
  return new Map(rows.map((r) => [r.id, { shard: r.shard, movingTo: r.movingTo }]));
}

export async function placementOf(env: Env, userId: string): Promise<Placement | null> {
  const row = await directoryOf(env).select({ shard: users.shard, movingTo: users.movingTo }).from(users).where(eq(users.id, userId)).get();
  return row ?? null;
}

/** The user's shard, looked up in the directory: for work that starts without a request (queue, admin). */
export async function userDb(env: Env, userId: string): Promise<Db | null> {
  const placed = await placementOf(env, userId);
  return placed ? shardDb(env, placed.shard) : null;
}

/** Shards one cron run visits at most; with more, successive runs take the next ones in turn. */
export const SHARDS_PER_RUN = 16;

/** The shards a cron run at `now` visits: all of them up to `SHARDS_PER_RUN`, else a window that rotates by run. */
export function shardsForRun(count: number, now: number, perRun = SHARDS_PER_RUN): number[] {
  if (count <= perRun) return Array.from({ length: count }, (_, i) => i);
  const start = (Math.floor(now / 300_000) * perRun) % count;
  return Array.from({ length: perRun }, (_, i) => (start + i) % count);
}

/**
 * Runs a per-database job on the shards of this run (each run bounded by the job's own limit), and adds up the
 * numbers it reports. A shard that fails does not stop the others; the run reports it and throws at the end.
 */
export async function acrossShards<T extends Record<string, number>>(env: Env, now: number, run: (db: Db, shard: number) => Promise<T>): Promise<T> {
  const total: Record<string, number> = {};
  const failed: number[] = [];
  let firstError: unknown;
  for (const shard of shardsForRun(shardCount(env), now)) {
    try {
      const out = await run(shardDb(env, shard), shard);
      for (const [k, v] of Object.entries(out)) total[k] = (total[k] ?? 0) + v;
    } catch (err) {
      failed.push(shard);
      firstError ??= err;
    }
  }
  if (failed.length) throw new Error(`failed on shard(s) ${failed.join(", ")}: ${firstError instanceof Error ? firstError.message : String(firstError)}`);
  return total as T;
}

/** How many users the directory places on each shard (the admin's view of the balance). */
export async function usersPerShard(env: Env): Promise<number[]> {
  const rows = await directoryOf(env).select({ shard: users.shard, n: sql<number>`count(*)` }).from(users).groupBy(users.shard).all();
  const out = new Array<number>(shardCount(env)).fill(0);
  for (const r of rows) out[r.shard] = r.n;
  return out;
}
