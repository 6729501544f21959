/**
 * Erasing a user's memory: everything engram remembers about them (sessions, and every capability's
 * data through its erase hook), in one D1 batch, with a receipt of counts. The account, its keys and
 * usage stay. Session Durable Objects go first (and any session started meanwhile, after the batch); the
 * batch is one transaction, so a failure erases nothing of what D1 holds; cleanup outside D1 (vectors) runs
 * after it and reports, rather than hides, a failure.
 */
import { eq } from "drizzle-orm";
import type { EraseContext, EraseHook } from "../core/capability";
import { returnedIds, runStatements } from "../db/batch";
import { newId } from "../db/client";
import { auditLogs, sessions } from "../db/schema";

export type EraseReceipt = {
  erased: Record<string, number | boolean>;
  kept: string[];
  erased_at: number;
  warnings?: string[];
};

/** Session objects destroyed at once: a few calls in flight, not one at a time nor thousands together. */
const DESTROY_AT_ONCE = 6;

async function destroyAll(ids: readonly string[], destroy: (sessionId: string) => Promise<void>): Promise<void> {
  for (let i = 0; i < ids.length; i += DESTROY_AT_ONCE) await Promise.all(ids.slice(i, i + DESTROY_AT_ONCE).map(destroy));
}

export async function eraseUserMemory(
  hooks: readonly EraseHook[],
  ctx: EraseContext,
  destroySession: (sessionId: string) => Promise<void>,
  requestId: string | null,
): Promise<EraseReceipt> {
  const { db, userId } = ctx;
  const sessionRows = await db.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, userId));
  const destroyed = new Set(sessionRows.map((s) => s.id));
  await destroyAll([...destroyed], destroySession);
  const plans = await Promise.all(hooks.map((hook) => hook(ctx)));
  const steps = [
    { count: "sessions", statement: db.delete(sessions).where(eq(sessions.userId, userId)).returning({ id: sessions.id }) },
    ...plans.flatMap((p) => p.statements),
  ];
  // Counted from RETURNING rows: D1's change counts include the FTS triggers' writes.
  const results = await runStatements(
    db,
    steps.map((s) => s.statement),
  );
  // A session started while the erase was planned lost its row in the batch: its object goes too, or its
  // conversation would stay stored with nothing pointing to it.
  await destroyAll(
    returnedIds(results[0]).filter((id) => !destroyed.has(id)),
    destroySession,
  );
  const erased: Record<string, number | boolean> = {};
  steps.forEach((step, i) => {
    if (step.count) erased[step.count] = Number(erased[step.count] ?? 0) + returnedIds(results[i]).length;
  });
  for (const key of plans.flatMap((p) => p.cleared ?? [])) erased[key] = true;
  const warnings: string[] = [];
  for (const plan of plans) {
    const out = await plan.after?.();
    Object.assign(erased, out?.counts ?? {});
    if (out?.warning) warnings.push(out.warning);
  }
  const receipt: EraseReceipt = {
    erased,
    kept: ["usage (billing records)", "audit_logs (this erasure, without content)", ...plans.flatMap((p) => p.kept ?? [])],
    erased_at: ctx.now,
    ...(warnings.length ? { warnings } : {}),
  };
  await db.insert(auditLogs).values({ id: newId("aud"), userId, action: "memory.erase", target: userId, detail: { erased }, requestId });
  return receipt;
}
