import { loadConfig } from "../config/config";
import type { CronJob } from "../core/cron";
import { createDb } from "../db/client";
import { memoryDeps } from "./deps";
import { sweepMemory } from "./sweep";

export const memorySweepJob: CronJob = {
  name: "memory.sweep",
  run: (env, now) => sweepMemory(memoryDeps(env, loadConfig(env), createDb(env.DB)), now),
};
