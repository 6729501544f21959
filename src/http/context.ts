import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Config } from "../config/config";
import type { Env } from "../config/env";
import type { Db } from "../db/client";
import type { Plan } from "../db/schema";

export type AuthedUser = { id: string; plan: Plan; keyId: string };

export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    config: Config;
    db: Db;
    user: AuthedUser;
  };
};

export type App = OpenAPIHono<AppEnv>;
