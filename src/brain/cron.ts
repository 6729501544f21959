import type { CronJob } from "../core/cron";
import { acrossShards } from "../db/shards";
import { markStaleHeartbeats } from "./heartbeat";

/** Marks heartbeats whose site has not synced for a day as stale (shown as such in the prompt and API). */
export const staleHeartbeatsJob: CronJob = {
  name: "brain.stale_heartbeats",
  run: (env, now) => acrossShards(env, now, (db) => markStaleHeartbeats(db, now)),
};
