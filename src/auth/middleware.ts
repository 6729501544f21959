import { createMiddleware } from "hono/factory";
import { assertWritable } from "../db/fence";
import { shardDb } from "../db/shards";
import type { AppEnv } from "../http/context";
import { AppError } from "../lib/errors";
import { safeEqual } from "./keys";
import { resolveApiKey } from "./service";

const bearer = (header: string | undefined) => {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m?.[1];
};

/** Resolves the user from `Authorization: Bearer <api key>`. The user is never taken from the body. */
export const requireUser = createMiddleware<AppEnv>(async (c, next) => {
  const key = bearer(c.req.header("authorization"));
  if (!key) throw new AppError("unauthorized", "missing bearer API key");
  const user = await resolveApiKey(c.var.directory, key);
  if (!user) throw new AppError("unauthorized", "invalid or revoked API key");
  assertWritable(user, c.req.method);
  c.set("user", user);
  c.set("db", shardDb(c.env, user.shard));
  await next();
});

/** Admin endpoints answer 401 until ADMIN_TOKEN is set, and then only to that token. */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.var.config.adminToken;
  const given = bearer(c.req.header("authorization"));
  if (!expected || !given || !(await safeEqual(given, expected))) {
    throw new AppError("unauthorized", expected ? "invalid admin token" : "admin endpoints are disabled: ADMIN_TOKEN is not set");
  }
  await next();
});
