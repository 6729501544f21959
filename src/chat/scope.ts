import type { Config } from "../config/config";
import type { Env } from "../config/env";
import type { Db } from "../db/client";
import type { Plan } from "../db/schema";

/** Who and where a chat turn is for: everything tools and context providers may read is scoped by it. */
export type TurnScope = {
  db: Db;
  env: Env;
  config: Config;
  userId: string;
  plan: Plan;
  sessionId: string;
  siteId: string | null;
  projectId: string | null;
};
