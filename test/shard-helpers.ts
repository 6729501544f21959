/**
 * Tests' view of the shards (src/db/shards.ts): which database holds a user's rows, as the directory says.
 * A test that reads or writes a user's rows in D1 directly goes through these, never through `env.DB` (the
 * directory, which is only shard 0).
 */
import { env } from "cloudflare:test";
import type { Db } from "../src/db/client";
import { dbOf, placementOf, shardBindings, shardD1 } from "../src/db/shards";

/** Where each user was found: a test can still reach a deleted user's shard to check what is left there. */
const known = new Map<string, number>();

/** The user's shard, as the directory placed them (remembered: `forgetShard` after a test moves the user). */
export async function shardOf(userId: string): Promise<number> {
  const seen = known.get(userId);
  if (seen !== undefined) return seen;
  const placed = await placementOf(env, userId);
  if (!placed) throw new Error(`the directory does not know user ${userId}`);
  known.set(userId, placed.shard);
  return placed.shard;
}

export const forgetShard = (userId: string) => known.delete(userId);

/** The D1 binding holding the user's rows. */
export const userD1 = async (userId: string): Promise<D1Database> => shardD1(env, await shardOf(userId));

/** The drizzle handle on the user's shard. */
export const userDb = async (userId: string): Promise<Db> => dbOf(await userD1(userId));

/** The last shard bound: another database than the directory, except in a one-shard run where it is the directory. */
export const lastShard = (): number => shardBindings(env).length - 1;

/** Every shard's D1 binding: for faults and maintenance that hold for all users wherever they live. */
export const allShards = (): D1Database[] => shardBindings(env);

/** Runs one statement on every shard (a row the statement names exists on one of them at most). */
export async function runOnAllShards(query: string, ...binds: unknown[]): Promise<void> {
  for (const d1 of allShards())
    await d1
      .prepare(query)
      .bind(...binds)
      .run();
}

/** The first row a query finds on any shard: for looking a row up by its unique id, whoever's it is. */
export async function rowOnShards<T>(query: string, ...binds: unknown[]): Promise<T | null> {
  for (const d1 of allShards()) {
    const row = await d1
      .prepare(query)
      .bind(...binds)
      .first<T>();
    if (row) return row;
  }
  return null;
}

/** A `count(*) AS n` over every shard, added up. */
export async function countOnShards(query: string, ...binds: unknown[]): Promise<number> {
  let n = 0;
  for (const d1 of allShards())
    n +=
      (
        await d1
          .prepare(query)
          .bind(...binds)
          .first<{ n: number }>()
      )?.n ?? 0;
  return n;
}
