import { and, eq, isNull, sql } from "drizzle-orm";
import { type Quota, quotaExceeded } from "../config/limits";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { snakeRow } from "../db/public-row";
import { belowQuota } from "../db/quota";
import { apiKeys, type Plan, users } from "../db/schema";
import type { AuthedUser } from "../http/context";
import { AppError, notFound } from "../lib/errors";
import { cleanMemoryText } from "../lib/sanitize";
import { displayPrefix, generateApiKey, hashApiKey } from "./keys";

/** Where a new user's rows go: the shard's index and its database (src/db/shards.ts picks them). */
export type NewUserPlace = (userId: string) => { shard: number; db: Db };

/**
 * Creates the user and their first key. A user placed on a shard other than the directory gets the shard's
 * `users` row first (their memory tiers live in it, their rows' foreign keys point at it): should the directory's
 * batch then fail, that row is an orphan no key reaches, never a user whose writes would fail.
 */
export async function createUser(directory: Db, place: NewUserPlace, input: { name?: string; email?: string; plan?: Plan }) {
  const id = newId("usr");
  const key = generateApiKey();
  const keyId = newId("key");
  const plan = input.plan ?? "free";
  const { shard, db } = place(id);
  if (db !== directory) await db.insert(users).values({ id, plan });
  const [user] = await directory.batch([
    directory
      .insert(users)
      .values({ id, name: input.name === undefined ? null : cleanMemoryText(input.name, 200, "name"), email: input.email ?? null, plan, shard })
      .returning(),
    directory.insert(apiKeys).values({ id: keyId, userId: id, name: "default", prefix: displayPrefix(key), hash: await hashApiKey(key) }),
  ]);
  const row = user[0];
  if (!row) throw new AppError("internal", "user was not created");
  return { user: publicUser(row), apiKey: { id: keyId, key, prefix: displayPrefix(key) } };
}

export function publicUser(u: typeof users.$inferSelect) {
  return snakeRow(u, ["id", "name", "email", "plan", "reviewMode", "createdAt"]);
}

/** Resolves a bearer key to its user, or null. Revoked keys resolve to nothing. */
export async function resolveApiKey(db: Db, key: string): Promise<AuthedUser | null> {
  const hash = await hashApiKey(key);
  const row = await db
    .select({ keyId: apiKeys.id, userId: users.id, plan: users.plan, shard: users.shard, movingTo: users.movingTo })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt)))
    .get();
  return row ? { id: row.userId, plan: row.plan, keyId: row.keyId, shard: row.shard, movingTo: row.movingTo } : null;
}

/** Issues another key while the user holds fewer active keys than the plan allows (counted inside the INSERT). */
export async function issueKey(db: Db, userId: string, quota: Quota, name?: string) {
  const key = generateApiKey();
  const id = newId("key");
  const row = {
    id,
    userId,
    name: name === undefined ? null : cleanMemoryText(name, 100, "name"),
    prefix: displayPrefix(key),
    hash: await hashApiKey(key),
    createdAt: Date.now(),
  };
  const inserted = await insertWhere(db, apiKeys, row, belowQuota(apiKeys.userId, userId, quota.limit, isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id })
    .get();
  if (!inserted) throw quotaExceeded(quota);
  return { id, key, prefix: displayPrefix(key) };
}

export async function listKeys(db: Db, userId: string) {
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(apiKeys.createdAt).all();
  return rows.map((k) => snakeRow(k, ["id", "name", "prefix", "createdAt", "revokedAt"]));
}

/**
 * Revokes one of the user's keys, never the last active one (that would lock the user out for good):
 * the condition is inside the statement, so two racing revocations of a user's last two keys cannot
 * both succeed.
 */
export async function revokeKey(db: Db, userId: string, keyId: string, at: number) {
  const done = await db
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(
      and(
        eq(apiKeys.id, keyId),
        eq(apiKeys.userId, userId),
        isNull(apiKeys.revokedAt),
        sql`EXISTS (SELECT 1 FROM api_keys AS other WHERE other.user_id = ${userId} AND other.id <> ${keyId} AND other.revoked_at IS NULL)`,
      ),
    )
    .returning({ id: apiKeys.id })
    .get();
  if (done) return;
  const active = await db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .get();
  if (!active) throw notFound("key");
  throw new AppError("conflict", "this is your only active API key: issue another (POST /v1/keys) before revoking it, or replace it with POST /v1/keys/rotate");
}

/**
 * Revokes the key that made the call and issues a new one, atomically: the revocation is conditional
 * on the calling key still being active, and the new key is inserted only if that revocation happened,
 * so a key revoked mid-request cannot mint a successor.
 */
export async function rotateKey(db: Db, user: AuthedUser, at: number) {
  const key = generateApiKey();
  const id = newId("key");
  const hash = await hashApiKey(key);
  const [revoked] = await db.batch([
    db
      .update(apiKeys)
      .set({ revokedAt: at })
      .where(and(eq(apiKeys.id, user.keyId), eq(apiKeys.userId, user.id), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id }),
    insertWhere(
      db,
      apiKeys,
      { id, userId: user.id, name: "rotated", prefix: displayPrefix(key), hash, createdAt: at },
      sql`EXISTS (SELECT 1 FROM api_keys WHERE id = ${user.keyId} AND revoked_at = ${at})`,
    ),
  ]);
  if (revoked.length === 0) throw new AppError("unauthorized", "invalid or revoked API key");
  return { id, key, prefix: displayPrefix(key), revoked: user.keyId };
}
