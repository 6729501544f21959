/**
 * The observation event bus: every write is a `context_events` row (pending) and then a queue
 * message. If the send fails the row stays pending and the sweep enqueues it: nothing is lost.
 */

import { and, eq, sql } from "drizzle-orm";
import { logWithheld, matchedPattern, type Withheld } from "../consent/sensitive";
import { readConsent } from "../consent/settings";
import { isConstraintError, returnedIds, runStatements, type Statement } from "../db/batch";
import { newId } from "../db/client";
import { newestFirst } from "../db/cursor";
import { inJson } from "../db/in-json";
import { insertWhere } from "../db/insert-where";
import { snakeRow } from "../db/public-row";
import type { Plan } from "../db/schema";
import { contextEvents, type JsonObject } from "../db/schema";
import { sessionLive } from "../db/session-live";
import { AppError, describeFailure } from "../lib/errors";
import { sha256Hex } from "../lib/hash";
import { cleanMemoryText, SANITIZE_MAX_CHARS } from "../lib/sanitize";
import { type Budget, consolidationBudget, deferredReason } from "./budget";
import { cleanJson } from "./clean";
import { CONSOLIDATE_KIND, type MemoryDeps } from "./deps";
import { canonicalJson } from "./ids";

export const INTERACTIVE_TYPES = ["fact", "preference", "project_details", "correction"] as const;
export const AUTONOMOUS_TYPES = ["scaffold_update", "learned_fact"] as const;

export type EventRow = typeof contextEvents.$inferSelect;
export type EventStatus = EventRow["status"];
export type ObservationInput = { type: string; content: string; sourceMetadata: JsonObject };

export const publicEvent = (e: EventRow) =>
  snakeRow(e, ["id", "eventType", "content", "sourceMetadata", "status", "attempts", "error", "createdAt", "processedAt"]);

export async function enqueue(deps: MemoryDeps, userId: string, eventIds: string[]): Promise<boolean> {
  if (!eventIds.length) return true;
  try {
    await deps.queue.send({ kind: CONSOLIDATE_KIND, userId, eventIds });
    return true;
  } catch (err) {
    console.error(JSON.stringify({ memory: "enqueue_failed", user: userId, events: eventIds.length, error: describeFailure(err) }));
    return false;
  }
}

/**
 * The hash an idempotency key is bound to: every observation of the request, cleaned, in order. Each row of the
 * request keeps it, so reusing the key with any other body (one observation fewer included) is told apart.
 * Cleaned rather than raw: it says no more about the request than the rows themselves (no hash of a redacted secret).
 */
const bodyHash = (inputs: readonly ObservationInput[]) => sha256Hex(canonicalJson(inputs.map((o) => [o.type, o.content, o.sourceMetadata])));

/**
 * Records observations. With an idempotency key, a replay of the same whole body returns the original events, and
 * any other body under the same key (a subset of it included) is a conflict. Over the daily budget, events are stored `deferred`. `session`: made
 * in that chat session, so written only while its row exists. A turn can outlive an erase or a deleted session
 * (the erase leaves some session objects to the sweep); what it observes then is dropped, not recorded after the
 * erase: `events` is empty.
 */
export async function recordObservations(
  deps: MemoryDeps,
  user: { id: string; plan: Plan },
  inputs: readonly ObservationInput[],
  idempotencyKey?: string,
  session?: string,
): Promise<{ events: EventRow[]; replayed: boolean; budget: Budget; withheld: number }> {
  const { db } = deps;
  // Metadata is stored, shown back and sent to the consolidation model like the content: cleaned the same way
  // (an object cleans to an object).
  const cleaned = inputs.map((o) => ({
    ...o,
    content: cleanMemoryText(o.content, SANITIZE_MAX_CHARS, "observation content"),
    sourceMetadata: cleanJson(o.sourceMetadata) as JsonObject,
  }));
  // An observation holding one of the user's sensitive patterns is never stored: only that it was withheld is logged.
  const { sensitive } = await readConsent(db, user.id);
  const withheld: Withheld[] = [];
  inputs = cleaned.filter((o) => {
    const rule = matchedPattern(sensitive, o.content);
    const via = session ? "chat" : typeof o.sourceMetadata.source === "string" ? o.sourceMetadata.source : "api";
    if (rule) withheld.push({ kind: "facts", why: "pattern", rule: rule.text, via, what: "observation" });
    return !rule;
  });
  await logWithheld(db, user.id, session ?? null, withheld);
  if (!inputs.length) return { events: [], replayed: false, budget: await consolidationBudget(db, user.id, user.plan, deps.now()), withheld: withheld.length };
  return { ...(await recordKept(deps, user, inputs, idempotencyKey, session)), withheld: withheld.length };
}

async function recordKept(
  deps: MemoryDeps,
  user: { id: string; plan: Plan },
  inputs: readonly ObservationInput[],
  idempotencyKey?: string,
  session?: string,
): Promise<{ events: EventRow[]; replayed: boolean; budget: Budget }> {
  const { db } = deps;
  const budget = await consolidationBudget(db, user.id, user.plan, deps.now());
  const keys = inputs.map((_, i) => (idempotencyKey ? `${idempotencyKey}#${i}` : null));
  const body = idempotencyKey ? await bodyHash(inputs) : null;
  const replay = async () => {
    const existing = await db
      .select()
      .from(contextEvents)
      .where(
        and(
          eq(contextEvents.userId, user.id),
          inJson(
            contextEvents.idempotencyKey,
            keys.flatMap((k) => k ?? []),
          ),
        ),
      )
      .all();
    if (!existing.length) return null;
    const byKey = new Map(existing.map((e) => [e.idempotencyKey, e]));
    // Rows stored before requests were hashed are compared one by one.
    const sameAs = (o: ObservationInput, e: EventRow | undefined) =>
      e?.idempotencyBody === null
        ? e.content === o.content && e.eventType === o.type && canonicalJson(e.sourceMetadata) === canonicalJson(o.sourceMetadata)
        : e?.idempotencyBody === body;
    const same = existing.length === inputs.length && inputs.every((o, i) => sameAs(o, byKey.get(keys[i] ?? null)));
    if (!same) throw new AppError("conflict", "this Idempotency-Key was already used with a different body");
    const events = keys.flatMap((k) => byKey.get(k) ?? []);
    await enqueue(
      deps,
      user.id,
      events.filter((e) => e.status === "pending").map((e) => e.id),
    );
    return { events, replayed: true, budget };
  };
  if (idempotencyKey) {
    const replayed = await replay();
    if (replayed) return replayed;
  }
  const status = budget.exhausted ? ("deferred" as const) : ("pending" as const);
  const createdAt = deps.now();
  const events: EventRow[] = inputs.map((o, i) => ({
    id: newId("evt"),
    userId: user.id,
    eventType: o.type,
    content: o.content,
    sourceMetadata: o.sourceMetadata,
    idempotencyKey: keys[i] ?? null,
    idempotencyBody: body,
    status,
    processed: false,
    attempts: 0,
    error: budget.exhausted ? deferredReason(budget) : null,
    createdAt,
    processedAt: null,
  }));
  try {
    if (session) {
      // One guarded INSERT per row (at most a turn's few), all in one transaction: every row or none.
      const live = sessionLive(user.id, session);
      const results = await runStatements(
        db,
        events.map((e) => insertWhere(db, contextEvents, e, live).returning({ id: contextEvents.id })),
      );
      if (!returnedIds(results[0]).length) return { events: [], replayed: false, budget };
    } else {
      // D1 binds at most 100 parameters a statement: a few rows per INSERT, all in one transaction.
      const statements: Statement[] = [];
      for (let i = 0; i < events.length; i += 8) statements.push(db.insert(contextEvents).values(events.slice(i, i + 8)));
      await runStatements(db, statements);
    }
  } catch (err) {
    // A concurrent request with the same key won the insert: answer as its replay.
    const raced = idempotencyKey && isConstraintError(err) ? await replay() : null;
    if (!raced) throw err;
    return raced;
  }
  if (status === "pending")
    await enqueue(
      deps,
      user.id,
      events.map((e) => e.id),
    );
  return { events, replayed: false, budget };
}

export async function listEvents(deps: MemoryDeps, userId: string, opts: { status?: EventStatus; limit: number; before?: string }) {
  const where = and(eq(contextEvents.userId, userId), opts.status ? eq(contextEvents.status, opts.status) : undefined);
  const keys = { at: contextEvents.createdAt, id: contextEvents.id };
  return newestFirst(deps.db.select().from(contextEvents).$dynamic(), keys, { where, before: opts.before, limit: opts.limit }).all();
}

export async function pendingCount(deps: MemoryDeps, userId: string): Promise<number> {
  const row = await deps.db
    .select({ n: sql<number>`count(*)` })
    .from(contextEvents)
    .where(and(eq(contextEvents.userId, userId), sql`${contextEvents.status} IN ('pending', 'deferred')`))
    .get();
  return row?.n ?? 0;
}

/** Failed events go back to pending and onto the queue (the user asked to try again). */
export async function retryFailed(deps: MemoryDeps, userId: string): Promise<string[]> {
  const rows = await deps.db
    .update(contextEvents)
    .set({ status: "pending", attempts: 0, error: null })
    .where(and(eq(contextEvents.userId, userId), eq(contextEvents.status, "failed")))
    .returning({ id: contextEvents.id });
  const ids = rows.map((r) => r.id);
  await enqueue(deps, userId, ids);
  return ids;
}
