/**
 * Who a /mcp request is for: the user of a verified OAuth token (with the scopes it was granted), or the owner of
 * a bearer API key (every right they have). Either way every tool then runs scoped to that user only.
 */
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { requireUser } from "../auth/middleware";
import { assertWritable } from "../db/fence";
import { users } from "../db/schema";
import { shardDb } from "../db/shards";
import type { AppEnv } from "../http/context";
import { rateLimitUser } from "../http/rate-limit";
import { AppError } from "../lib/errors";
import { oauthHelpers, resourceMetadataUrl, verifiedGrant } from "./provider";

const executionCtx = (c: Context<AppEnv>): object | undefined => {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
};

/** The scopes of the request's OAuth token; null when an API key authenticated it (no scope limits). */
export const grantedScopes = (c: Context<AppEnv>): readonly string[] | null => verifiedGrant(executionCtx(c))?.scope ?? null;

export const authenticateMcp = createMiddleware<AppEnv>(async (c, next) => {
  const grant = verifiedGrant(executionCtx(c));
  if (!grant) {
    // RFC 6750 / 9728: the challenge names the credential and, where OAuth runs, where to get a token.
    const metadata = oauthHelpers(c.env) ? `, resource_metadata="${resourceMetadataUrl(new URL(c.req.url).origin)}"` : "";
    c.header("WWW-Authenticate", `Bearer realm="engram"${metadata}`);
    return requireUser(c, async () => {
      await rateLimitUser(c, next);
    });
  }
  // Users live in the directory; their memory in their shard.
  const user = await c.var.directory
    .select({ id: users.id, plan: users.plan, shard: users.shard, movingTo: users.movingTo })
    .from(users)
    .where(eq(users.id, grant.userId))
    .get();
  if (!user) throw new AppError("unauthorized", "the account this token was issued for no longer exists");
  assertWritable(user, c.req.method);
  // Rate limits count a connected app like one more key of its user.
  c.set("user", { ...user, keyId: `oauth:${grant.clientId}` });
  c.set("db", shardDb(c.env, user.shard));
  await rateLimitUser(c, next);
});
