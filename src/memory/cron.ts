import { loadConfig } from "../config/config";
import type { CronJob } from "../core/cron";
import { acrossShards } from "../db/shards";
import { memoryDeps } from "./deps";
import { sweepMemory } from "./sweep";

export const memorySweepJob: CronJob = {
  name: "memory.sweep",
  run: (env, now) => acrossShards(env, now, (db) => sweepMemory(memoryDeps(env, loadConfig(env), db), now)),
};
