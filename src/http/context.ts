import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Config } from "../config/config";
import type { Env } from "../config/env";
import type { Db } from "../db/client";
import type { Plan } from "../db/schema";

/** `shard`: the database holding the user's rows, from the directory (src/db/shards.ts). */
/** `movingTo`: the shard an admin is moving the user to, while it runs (their writes pause). */
export type AuthedUser = { id: string; plan: Plan; keyId: string; shard: number; movingTo: number | null };

export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    config: Config;
    /** The directory database: users, API keys, the user-to-shard map. */
    directory: Db;
    /** The authenticated user's shard (the directory before authentication). */
    db: Db;
    user: AuthedUser;
  };
};

export type App = OpenAPIHono<AppEnv>;
