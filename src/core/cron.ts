import type { Env } from "../config/env";
import { describeFailure } from "../lib/errors";

export type CronJob = { name: string; run(env: Env, now: number): Promise<unknown> };

/** Runs every job; one failing job does not stop the others, and the failure is logged. */
export async function runScheduled(jobs: readonly CronJob[], env: Env, now: number): Promise<Record<string, unknown>> {
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
