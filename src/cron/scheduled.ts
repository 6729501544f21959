import { describeFailure } from "../http/errors";
import { staleHeartbeatsJob } from "../brain/cron";
import type { Env } from "../config/env";
import { memorySweepJob } from "../memory/cron";

export type CronJob = { name: string; run(env: Env, now: number): Promise<unknown> };

/** Every cron job; capabilities add theirs here. */
const jobs: readonly CronJob[] = [staleHeartbeatsJob, memorySweepJob];

/** Runs every job; one failing job does not stop the others, and the failure is logged. */
export async function runScheduled(env: Env, now: number): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  for (const job of jobs) {
    try {
      results[job.name] = await job.run(env, now);
    } catch (err) {
      results[job.name] = { error: describeFailure(err) };
      console.error(JSON.stringify({ cron: job.name, error: results[job.name] }));
    }
  }
  return results;
}
