/**
 * The activity log: every project change, newest first, and undoing one. An undo is one-shot (the entry
 * is claimed with a guarded update before anything changes, so two racing undos cannot both apply) and
 * refuses what later changes made impossible, with a message saying why.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Quota } from "../config/limits";
import type { Db } from "../db/client";
import { newestFirst } from "../db/cursor";
import { snakeRow } from "../db/public-row";
import { type JsonObject, projectActivity } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { deleteProject, type MemoryKind, restoreProject, setMemoryProject } from "./moves";
import { getProject, updateProject } from "./store";

export type ActivityRow = typeof projectActivity.$inferSelect;

export const publicActivity = (a: ActivityRow) => ({
  ...snakeRow(a, ["id", "projectId", "action", "actor", "reason", "summary", "detail", "sessionId"]),
  undoable: a.undo !== null && a.undoneAt === null,
  ...snakeRow(a, ["undoneAt", "createdAt"]),
});

export async function listActivity(db: Db, userId: string, opts: { limit: number; before?: string; projectId?: string }) {
  const where = and(eq(projectActivity.userId, userId), opts.projectId ? eq(projectActivity.projectId, opts.projectId) : undefined);
  const keys = { at: projectActivity.createdAt, id: projectActivity.id };
  return newestFirst(db.select().from(projectActivity).$dynamic(), keys, { where, before: opts.before, limit: opts.limit }).all();
}

const str = (v: JsonObject[string] | undefined) => (typeof v === "string" ? v : null);

/**
 * Undoes one entry as the user. Returns the entry, now marked undone. `quota`: the plan's cap on projects,
 * which undoing a delete or merge (the project comes back) is held to.
 */
export async function undoActivity(db: Db, userId: string, id: string, quota: Quota): Promise<ActivityRow> {
  const entry = await db
    .select()
    .from(projectActivity)
    .where(and(eq(projectActivity.id, id), eq(projectActivity.userId, userId)))
    .get();
  if (!entry) throw notFound("activity entry");
  if (!entry.undo)
    throw new AppError(
      "conflict",
      `"${entry.summary}" cannot be undone${entry.action === "suggest_memory" ? ": the memory stayed at user level; move it to accept the suggestion" : ""}`,
    );
  if (entry.undoneAt !== null) throw new AppError("conflict", `"${entry.summary}" was already undone`);
  const now = Date.now();
  const [claimed] = await db
    .update(projectActivity)
    .set({ undoneAt: now })
    .where(and(eq(projectActivity.id, id), eq(projectActivity.userId, userId), isNull(projectActivity.undoneAt)))
    .returning();
  if (!claimed) throw new AppError("conflict", `"${entry.summary}" was already undone`);
  try {
    await apply(db, userId, entry.undo, quota);
  } catch (err) {
    // Nothing changed: the entry stays undoable.
    await db
      .update(projectActivity)
      .set({ undoneAt: null })
      .where(and(eq(projectActivity.id, id), eq(projectActivity.userId, userId)));
    if (err instanceof AppError && err.code === "not_found") throw new AppError("conflict", `cannot undo "${entry.summary}": the ${err.message}`);
    throw err;
  }
  return claimed;
}

/** Carries out an undo recipe as the user (changes to a project are logged again, with the reason "undo"). */
async function apply(db: Db, userId: string, undo: JsonObject, quota: Quota): Promise<void> {
  const user = { userId, actor: "user" as const, reason: "undo" };
  const projectId = str(undo.project_id);
  switch (undo.op) {
    case "delete_created":
      if (!projectId) break;
      await deleteProject(db, projectId, user);
      return;
    case "rename":
      if (!projectId || !str(undo.name)) break;
      await updateProject(db, projectId, { ...user, name: str(undo.name) ?? undefined });
      return;
    case "describe":
      if (!projectId) break;
      await updateProject(db, projectId, { ...user, description: str(undo.description) });
      return;
    case "archive":
    case "unarchive":
      if (!projectId) break;
      await updateProject(db, projectId, { ...user, archived: undo.op === "archive" });
      return;
    case "restore":
      await restoreProject(db, userId, undo, quota);
      return;
    case "move": {
      const memoryId = str(undo.memory_id);
      if (!memoryId) break;
      if (projectId) await getProject(db, userId, projectId);
      const moved = await setMemoryProject(db, userId, undo.kind === "memory_entry" ? "memory_entry" : ("fact" as MemoryKind), memoryId, projectId);
      if (!moved.length) throw notFound("memory no longer exists");
      return;
    }
  }
  throw new AppError("internal", "this entry's undo is not understood");
}
