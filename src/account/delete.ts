/**
 * Deleting a user's account (the admin's call): the keys and connected apps' OAuth grants stop working first,
 * then the memory is erased (`eraseUserMemory`, with its receipt), then one batch deletes the account; keys, usage
 * and settings go with it (foreign keys cascade), and an audit row without content stays.
 *
 * A request that passed authentication before the keys were revoked can still start a session after the erase's
 * batch. The users cascade would delete that session's row, and nothing would destroy its object (the stored
 * conversation). So the account's batch first records every session the user still has in `session_erasures`,
 * which the cron sweep works off like any erase's leftovers.
 *
 * With shards (src/db/shards.ts), keys live in the directory and the rest on the user's shard: the keys are revoked
 * first, the shard's batch deletes its users row (the cascade takes the user's rows there), and the directory's
 * users row goes last (taking the keys), so a failure half-way leaves an account an admin can delete again.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { EraseContext, EraseHook } from "../core/capability";
import { runStatements } from "../db/batch";
import { type Db, newId } from "../db/client";
import { apiKeys, auditLogs, sessionErasures, users } from "../db/schema";
import { revokeAllUserGrants } from "../oauth/grants";
import { type DestroySession, recordSessionErasures } from "../sessions/erasure";
import { type EraseReceipt, eraseUserMemory, pendingWarning } from "./erase";

/** All that outlives a deleted account: usage, keys, connections and settings go with the user row. */
const ACCOUNT_KEPT = "audit_logs (this erasure and the account's deletion, without content)";

export async function deleteUserAccount(
  directory: Db,
  hooks: readonly EraseHook[],
  ctx: EraseContext,
  destroySession: DestroySession,
  requestId: string | null,
): Promise<EraseReceipt> {
  const { db, userId, now } = ctx;
  await directory
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
  await revokeAllUserGrants(ctx.env, userId);
  const receipt = await eraseUserMemory(hooks, ctx, destroySession, requestId);
  const pendingNow = sql`SELECT count(*) AS n FROM ${sessionErasures} WHERE ${sessionErasures.userId} = ${userId}`;
  const [, pending] = await runStatements(db, [
    recordSessionErasures(userId, now, []),
    pendingNow,
    db.delete(users).where(eq(users.id, userId)),
    db.insert(auditLogs).values({
      id: newId("aud"),
      userId,
      action: "admin.user_deleted",
      target: userId,
      detail: sql`json_object('erased', json(${JSON.stringify(receipt.erased)}), 'pending', json_object('session_objects', (${pendingNow})))`,
      requestId,
    }),
  ]);
  if (directory !== db) await directory.delete(users).where(eq(users.id, userId));
  const owed = Number((pending?.results[0] as { n?: number } | undefined)?.n ?? 0);
  // The erase keeps usage and connections for an account that goes on; deleting the account takes them too.
  const deleted = { ...receipt, kept: [ACCOUNT_KEPT] };
  if (owed === receipt.pending.session_objects) return deleted;
  const warnings = [...(receipt.warnings ?? []).filter((w) => w !== pendingWarning(receipt.pending.session_objects)), ...(owed ? [pendingWarning(owed)] : [])];
  return { ...deleted, pending: { session_objects: owed }, warnings: warnings.length ? warnings : undefined };
}
