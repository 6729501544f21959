/**
 * Retention of per-turn audit rows (`context_logs`). Each holds the system text its turn was shown, memory
 * included: it is most of what a user stores, and it keeps the words of a fact the user has since forgotten.
 * A cron job deletes the rows older than AUDIT_RETENTION_DAYS (0 keeps them until the user erases).
 */
import { sql } from "drizzle-orm";
import { loadConfig } from "../config/config";
import type { Env } from "../config/env";
import type { CronJob } from "../core/cron";
import { changes } from "../db/batch";
import type { Db } from "../db/client";
import { acrossShards } from "../db/shards";

/** Rows deleted per statement, and statements per run: a backlog is worked off over several runs. */
const STEP = 500;
const STEPS_PER_RUN = 20;
const DAY_MS = 86_400_000;

/** Deletes audit rows written before `before`, oldest first, found through the index on `created_at`. */
export async function pruneContextLogs(db: Db, before: number): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < STEPS_PER_RUN; i++) {
    const res = await db.run(
      sql`DELETE FROM context_logs WHERE rowid IN (SELECT rowid FROM context_logs WHERE created_at < ${before} ORDER BY created_at LIMIT ${STEP})`,
    );
    deleted += changes(res);
    if (changes(res) < STEP) break;
  }
  return deleted;
}

export const contextLogRetention: CronJob = {
  name: "context_logs.retention",
  async run(env: Env, now: number) {
    const days = loadConfig(env).auditRetentionDays;
    if (days === 0) return { deleted: 0, retention: "until erased" };
    const { deleted } = await acrossShards(env, now, async (db) => ({ deleted: await pruneContextLogs(db, now - days * DAY_MS) }));
    return { deleted, retention_days: days };
  },
};
