import type { Config } from "../config/config";
import type { Env } from "../config/env";
import type { Db } from "../db/client";

/** Who and where a chat turn is for: everything tools and context providers may read is scoped by it. */
export type TurnScope = {
  db: Db;
  env: Env;
  config: Config;
  userId: string;
  plan: "free" | "pro";
  sessionId: string;
  siteId: string | null;
  projectId: string | null;
};
