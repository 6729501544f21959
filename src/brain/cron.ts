import type { CronJob } from "../core/cron";
import { createDb } from "../db/client";
import { markStaleHeartbeats } from "./heartbeat";

/** Marks heartbeats whose site has not synced for a day as stale (shown as such in the prompt and API). */
export const staleHeartbeatsJob: CronJob = {
  name: "brain.stale_heartbeats",
  run: (env, now) => markStaleHeartbeats(createDb(env.DB), now),
};
