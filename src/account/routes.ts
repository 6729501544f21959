/**
 * Erasing memory (the user's own call) and the admin's view of accounts: list users, delete a user
 * with everything engram holds about them.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { User } from "../auth/routes";
import { publicUser } from "../auth/service";
import type { Env } from "../config/env";
import type { Registry } from "../core/capability";
import type { Db } from "../db/client";
import { CursorParam, newestFirst, nextCursor } from "../db/cursor";
import { assertWritable } from "../db/fence";
import { inJson } from "../db/in-json";
import { users } from "../db/schema";
import { shardDb } from "../db/shards";
import type { AppEnv } from "../http/context";
import { ErrorBody } from "../http/errors";
import { errors, json, newRouter, Slug, security, userMoving } from "../http/openapi";
import { notFound } from "../lib/errors";
import { destroySessionObject } from "../sessions/store";
import { deleteUserAccount } from "./delete";
import { eraseUserMemory } from "./erase";

const Receipt = z
  .object({
    erased: z
      .record(z.string(), z.union([z.number(), z.boolean()]))
      .describe("What was erased: counts per kind of data (`session_objects`: stored conversations destroyed by this request)"),
    pending: z
      .object({ session_objects: z.number().int() })
      .describe("What is still to be erased, by a background job: stored conversations of sessions whose rows are already gone"),
    kept: z.array(z.string()).describe("What is deliberately kept, and why"),
    erased_at: z.number(),
    warnings: z.array(z.string()).optional().describe("Cleanup outside the database that could not finish now"),
  })
  .openapi("EraseReceipt");

const eraseRoute = createRoute({
  method: "delete",
  path: "/v1/memory",
  operationId: "eraseMemory",
  tags: ["memory"],
  summary: "Erase everything engram remembers about you (sessions, brain, facts, events, projects, lessons); returns a receipt",
  security,
  responses: { 200: json(Receipt, "Receipt"), ...errors },
});

const listUsersRoute = createRoute({
  method: "get",
  path: "/v1/admin/users",
  operationId: "listUsers",
  tags: ["admin"],
  summary: "List users, newest first",
  security,
  request: { query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), before: CursorParam }) },
  responses: { 200: json(z.object({ users: z.array(User), next_before: z.string().nullable() }), "Users"), ...errors },
});

const deleteUserRoute = createRoute({
  method: "delete",
  path: "/v1/admin/users/{id}",
  operationId: "deleteUser",
  tags: ["admin"],
  summary: "Delete a user: their keys stop working, their memory is erased (with the receipt), then the account, keys and usage go",
  security,
  request: { params: z.object({ id: Slug }) },
  responses: {
    200: json(z.object({ deleted: z.string(), receipt: Receipt }), "Deleted"),
    ...errors,
    503: { ...json(ErrorBody, "The user is being moved to another database (user_moving): retry after Retry-After seconds"), headers: userMoving.headers },
  },
});

/**
 * The settings of a page of users, read where they live: the directory's row holds a user's settings only for
 * users on shard 0 (it is their shard's row). One query per shard the page touches, at most one per user.
 */
async function settingsOnShards(env: Env, rows: readonly { id: string; shard: number }[]) {
  const byShard = new Map<number, string[]>();
  for (const r of rows) if (r.shard !== 0) byShard.set(r.shard, [...(byShard.get(r.shard) ?? []), r.id]);
  const found = await Promise.all(
    [...byShard].map(([shard, ids]) =>
      shardDb(env, shard).select({ id: users.id, reviewMode: users.reviewMode }).from(users).where(inJson(users.id, ids)).all(),
    ),
  );
  return new Map(found.flat().map((r) => [r.id, { reviewMode: r.reviewMode }]));
}

export function accountRoutes(registry: Registry) {
  // What erasing (the user's own call) and deleting an account (the admin's) both run with.
  const eraseArgs = (c: Context<AppEnv>, userId: string, db: Db) =>
    [
      registry.eraseHooks,
      { env: c.env, config: c.var.config, db, userId, now: Date.now() },
      (owner: string, sessionId: string) => destroySessionObject(c.env, owner, sessionId),
      c.var.requestId,
    ] as const;
  return newRouter()
    .openapi(eraseRoute, async (c) => c.json(await eraseUserMemory(...eraseArgs(c, c.var.user.id, c.var.db)), 200))
    .openapi(listUsersRoute, async (c) => {
      const { limit, before } = c.req.valid("query");
      const rows = await newestFirst(c.var.directory.select().from(users).$dynamic(), { at: users.createdAt, id: users.id }, { before, limit });
      const settings = await settingsOnShards(c.env, rows);
      return c.json(
        { users: rows.map((u) => publicUser({ ...u, ...settings.get(u.id) })), next_before: nextCursor(rows, limit, (u) => [u.createdAt, u.id]) },
        200,
      );
    })
    .openapi(deleteUserRoute, async (c) => {
      const { id } = c.req.valid("param");
      const placed = await c.var.directory.select({ shard: users.shard, movingTo: users.movingTo }).from(users).where(eq(users.id, id)).get();
      if (!placed) throw notFound("user");
      // Deleting is a write: it waits for a move of the user to finish, as theirs do.
      assertWritable(placed, "DELETE");
      const receipt = await deleteUserAccount(c.var.directory, ...eraseArgs(c, id, shardDb(c.env, placed.shard)));
      return c.json({ deleted: id, receipt }, 200);
    });
}
