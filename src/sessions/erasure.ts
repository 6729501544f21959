/**
 * Destroying the session objects of an erased user, durably. A user can hold thousands of sessions, and every
 * call to a session's Durable Object is a subrequest of the invocation that makes it, so one request cannot
 * promise to reach them all. The erase's D1 batch records each session it deletes in `session_erasures`
 * (`recordSessionErasures`); the request then destroys a bounded number of them, and the cron job
 * (`sessionErasureSweep`) works off the rest for every user. A row goes only once its object confirmed `destroy`.
 * Each row is marked tried before its call, so a failure, or a call that never answers, sends it to the back of
 * the order, and a later sweep tries it again.
 */
import { and, asc, count, desc, eq, not, sql } from "drizzle-orm";
import type { Env } from "../config/env";
import type { CronJob } from "../core/cron";
import type { Db } from "../db/client";
import { inJson } from "../db/in-json";
import { sessionErasures, sessions } from "../db/schema";
import { acrossShards } from "../db/shards";
import { describeFailure } from "../lib/errors";
import { destroySessionObject } from "./store";

/** Destroys one session's object (owner and session id). Tests pass one that fails on purpose. */
export type DestroySession = (userId: string, sessionId: string) => Promise<void>;

/** Session objects destroyed at once: a few calls in flight, not one at a time nor thousands together. */
export const DESTROY_AT_ONCE = 6;

/**
 * Session objects one cron run destroys at most (with two D1 batches per round of `DESTROY_AT_ONCE`, about 320
 * subrequests): well inside an invocation's allowance, with room for the other jobs of the same run.
 */
export const SWEEP_PER_RUN = 240;

type Pending = { userId: string; sessionId: string };

/**
 * For the erase's batch: every session the user still has becomes pending, except the ones whose object the
 * erase already destroyed. Runs before the batch deletes the rows, so a session started meanwhile is recorded too.
 */
export const recordSessionErasures = (userId: string, now: number, destroyed: readonly string[]) =>
  sql`INSERT INTO ${sessionErasures} (user_id, session_id, last_active_at, requested_at)
      SELECT ${sessions.userId}, ${sessions.id}, ${sessions.updatedAt}, ${now} FROM ${sessions}
      WHERE ${sessions.userId} = ${userId} AND NOT ${inJson(sessions.id, destroyed)}
      ON CONFLICT DO NOTHING`;

/**
 * Calls `destroy` for each, `DESTROY_AT_ONCE` at a time; `starting` sees each round before its calls, `settle`
 * the objects it destroyed after them.
 */
export async function destroyInRounds(
  items: readonly Pending[],
  destroy: DestroySession,
  hooks: { starting?: (round: Pending[]) => Promise<void>; settle?: (done: Pending[]) => Promise<void> } = {},
): Promise<{ destroyed: Pending[]; failed: Pending[] }> {
  const destroyed: Pending[] = [];
  const failed: Pending[] = [];
  for (let i = 0; i < items.length; i += DESTROY_AT_ONCE) {
    const round = items.slice(i, i + DESTROY_AT_ONCE);
    await hooks.starting?.(round);
    const outcomes = await Promise.allSettled(round.map((p) => destroy(p.userId, p.sessionId)));
    const done: Pending[] = [];
    const missed: Pending[] = [];
    outcomes.forEach((o, j) => {
      const p = round[j] as Pending;
      if (o.status === "fulfilled") done.push(p);
      else {
        missed.push(p);
        console.error(JSON.stringify({ session_destroy_failed: p.sessionId, error: describeFailure(o.reason) }));
      }
    });
    await hooks.settle?.(done);
    destroyed.push(...done);
    failed.push(...missed);
  }
  return { destroyed, failed };
}

const rowOf = (p: Pending) => and(eq(sessionErasures.userId, p.userId), eq(sessionErasures.sessionId, p.sessionId));

/**
 * Marks a round's rows tried before their calls: a call that never answers (the run is cut off while it waits) has
 * still sent its row to the back of the sweep's order, so it cannot hold up every later run in front of the others.
 */
async function markTried(db: Db, round: Pending[], now: number): Promise<void> {
  const [first, ...rest] = round.map((p) =>
    db
      .update(sessionErasures)
      .set({ triedAt: now, attempts: sql`${sessionErasures.attempts} + 1` })
      .where(rowOf(p)),
  );
  if (first) await db.batch([first, ...rest]);
}

/** Deletes the rows of confirmed objects; the others stay, already marked tried. */
async function forgetDestroyed(db: Db, done: Pending[]): Promise<void> {
  const [first, ...rest] = done.map((p) => db.delete(sessionErasures).where(rowOf(p)));
  if (first) await db.batch([first, ...rest]);
}

/**
 * Destroys pending session objects, at most `limit`. For one user (the erase request): that user's rows only,
 * the most recently active first, skipping `exclude` (objects this request already tried). For everyone (the
 * cron sweep): the untried first, then the longest-waiting.
 */
export async function destroyPendingSessions(
  db: Db,
  destroy: DestroySession,
  opts: { limit: number; now: number; userId?: string; exclude?: readonly string[] },
): Promise<{ destroyed: number; failed: number }> {
  if (opts.limit <= 0) return { destroyed: 0, failed: 0 };
  const select = db.select({ userId: sessionErasures.userId, sessionId: sessionErasures.sessionId }).from(sessionErasures);
  const rows =
    opts.userId === undefined
      ? await select.orderBy(asc(sessionErasures.triedAt), asc(sessionErasures.requestedAt)).limit(opts.limit)
      : await select
          .where(and(eq(sessionErasures.userId, opts.userId), not(inJson(sessionErasures.sessionId, opts.exclude ?? []))))
          .orderBy(desc(sessionErasures.lastActiveAt))
          .limit(opts.limit);
  const out = await destroyInRounds(rows, destroy, { starting: (round) => markTried(db, round, opts.now), settle: (done) => forgetDestroyed(db, done) });
  return { destroyed: out.destroyed.length, failed: out.failed.length };
}

/** How many of the user's session objects are still to destroy. */
export async function pendingSessionErasures(db: Db, userId: string): Promise<number> {
  const row = await db.select({ n: count() }).from(sessionErasures).where(eq(sessionErasures.userId, userId)).get();
  return row?.n ?? 0;
}

/** The cron job: destroys what erase requests left, every user's, within `SWEEP_PER_RUN` objects a run. */
export const sessionErasureSweep: CronJob = {
  name: "sessions.erasure",
  run: (env: Env, now: number) =>
    acrossShards(env, now, (db) =>
      destroyPendingSessions(db, (userId, sessionId) => destroySessionObject(env, userId, sessionId), { limit: SWEEP_PER_RUN, now }),
    ),
};
