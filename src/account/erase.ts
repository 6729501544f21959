/**
 * Erasing a user's memory: everything engram remembers about them (sessions, and every capability's
 * data through its erase hook), in one D1 batch, with a receipt of counts. The account, its keys and
 * usage stay. The batch is one transaction, so a failure erases nothing of what D1 holds.
 *
 * Session Durable Objects: the most recently active go first, before the batch (a turn may be running in them).
 * The batch records every session it deletes whose object is not destroyed yet (`session_erasures`), a session
 * started meanwhile included; after it, the request destroys more of them, at most `SESSION_OBJECTS_PER_ERASE`
 * calls in all, and the cron sweep destroys the rest. The receipt counts the objects destroyed now and those
 * pending. Cleanup outside D1 (vectors) runs after the batch and reports, rather than hides, a failure.
 */
import { desc, eq } from "drizzle-orm";
import type { EraseContext, EraseHook } from "../core/capability";
import { returnedIds, runStatements, type Statement } from "../db/batch";
import { newId } from "../db/client";
import { auditLogs, sessions } from "../db/schema";
import {
  DESTROY_AT_ONCE,
  type DestroySession,
  destroyInRounds,
  destroyPendingSessions,
  pendingSessionErasures,
  recordSessionErasures,
} from "../sessions/erasure";

export type EraseReceipt = {
  erased: Record<string, number | boolean>;
  pending: { session_objects: number };
  kept: string[];
  erased_at: number;
  warnings?: string[];
};

/**
 * Session objects one erase request destroys at most. Every call to an object is a subrequest of the request
 * (Cloudflare counts Durable Object calls with D1's and fetch's against a per-invocation allowance), and the
 * request must also end in reasonable time; a user with more sessions has the rest destroyed by the cron sweep.
 */
export const SESSION_OBJECTS_PER_ERASE = 60;

/** The receipt's warning while session objects are still to be destroyed. */
export const pendingWarning = (n: number) => `${n} session objects (stored conversations) are still to be destroyed: a background job finishes them`;

export async function eraseUserMemory(
  hooks: readonly EraseHook[],
  ctx: EraseContext,
  destroySession: DestroySession,
  requestId: string | null,
): Promise<EraseReceipt> {
  const { db, userId, now } = ctx;
  // One round of calls is kept for after the batch: sessions started meanwhile are the ones in use.
  const first = await db
    .select({ id: sessions.id })
    .from(sessions)
    .where(eq(sessions.userId, userId))
    .orderBy(desc(sessions.updatedAt), desc(sessions.id))
    .limit(SESSION_OBJECTS_PER_ERASE - DESTROY_AT_ONCE);
  const tried = first.map((s) => s.id);
  const before = await destroyInRounds(
    tried.map((sessionId) => ({ userId, sessionId })),
    destroySession,
  );
  const plans = await Promise.all(hooks.map((hook) => hook(ctx)));
  const steps: { count?: string; statement: Statement }[] = [
    {
      statement: recordSessionErasures(
        userId,
        now,
        before.destroyed.map((p) => p.sessionId),
      ),
    },
    { count: "sessions", statement: db.delete(sessions).where(eq(sessions.userId, userId)).returning({ id: sessions.id }) },
    ...plans.flatMap((p) => p.statements),
  ];
  // Counted from RETURNING rows: D1's change counts include the FTS triggers' writes.
  const results = await runStatements(
    db,
    steps.map((s) => s.statement),
  );
  // The rest of the allowance, for what the batch recorded (a session started meanwhile first, being the most
  // recently active) and anything an earlier erase left; an object that failed before the batch waits for the sweep.
  const after = await destroyPendingSessions(db, destroySession, { userId, limit: SESSION_OBJECTS_PER_ERASE - tried.length, now, exclude: tried });
  const pending = { session_objects: await pendingSessionErasures(db, userId) };
  const erased: Record<string, number | boolean> = {};
  const erasedIds: Record<string, string[]> = {};
  steps.forEach((step, i) => {
    if (step.count) erasedIds[step.count] = [...(erasedIds[step.count] ?? []), ...returnedIds(results[i])];
  });
  for (const [key, ids] of Object.entries(erasedIds)) erased[key] = ids.length;
  erased.session_objects = before.destroyed.length + after.destroyed;
  for (const key of plans.flatMap((p) => p.cleared ?? [])) erased[key] = true;
  const warnings: string[] = [];
  if (pending.session_objects) warnings.push(pendingWarning(pending.session_objects));
  for (const plan of plans) {
    const out = await plan.after?.(erasedIds);
    Object.assign(erased, out?.counts ?? {});
    if (out?.warning) warnings.push(out.warning);
  }
  const receipt: EraseReceipt = {
    erased,
    pending,
    kept: ["usage records (for billing)", "a record of this erasure (without content)", ...plans.flatMap((p) => p.kept ?? [])],
    erased_at: ctx.now,
    ...(warnings.length ? { warnings } : {}),
  };
  await db.insert(auditLogs).values({ id: newId("aud"), userId, action: "memory.erase", target: userId, detail: { erased, pending }, requestId });
  return receipt;
}
