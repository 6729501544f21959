/** One activity entry as a statement that joins the write it records (same D1 batch). */
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { type JsonObject, type ProjectAction, projectActivity } from "../db/schema";

/** Who acts, for whom, and where: the assistant in a chat session, or the user through the API. */
export type Actor = { userId: string; actor: "assistant" | "user"; sessionId?: string | null };

export type ActivityInput = {
  projectId: string | null;
  action: ProjectAction;
  summary: string;
  detail: JsonObject;
  /** What undoing it takes (read by undo.ts); null: nothing to undo. */
  undo: JsonObject | null;
  reason?: string | null;
  /** Logged only when this holds once the statements before it in the batch have run. */
  when?: SQL;
};

/**
 * Entries of one request share the Worker's frozen clock; a strictly increasing time keeps them in the order
 * they were made (the log is read newest first by time, then id).
 */
let last = 0;
export const tick = () => {
  last = Math.max(Date.now(), last + 1);
  return last;
};

export function activityRow(db: Db, who: Actor & { reason?: string | null }, a: ActivityInput) {
  const id = newId("pac");
  const row = {
    id,
    userId: who.userId,
    projectId: a.projectId,
    action: a.action,
    actor: who.actor,
    reason: a.reason ?? who.reason ?? null,
    summary: a.summary,
    detail: a.detail,
    undo: a.undo,
    sessionId: who.sessionId ?? null,
    undoneAt: null,
    createdAt: tick(),
  };
  return { id, statement: insertWhere(db, projectActivity, row, a.when ?? sql`1`) };
}
