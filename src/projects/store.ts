/**
 * Projects: reading them, and the single-row changes (create, rename, describe, archive). Every write
 * goes into one D1 batch with its activity row, so the log never misses a change nor lists one that
 * did not happen. Names are unique per user ignoring case (a unique index decides under races).
 */
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { type Quota, quotaExceeded } from "../config/limits";
import { isConstraintError, runBatch } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { snakeRow } from "../db/public-row";
import { belowQuota } from "../db/quota";
import { projects, sessions } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { cleanMemoryText } from "../lib/sanitize";
import { type Actor, activityRow } from "./activity-row";

export type ProjectRow = typeof projects.$inferSelect;

export const publicProject = (p: ProjectRow) => ({
  ...snakeRow(p, ["id", "name", "description", "createdBy", "reason"]),
  archived: p.archivedAt !== null,
  ...snakeRow(p, ["archivedAt", "createdAt", "updatedAt"]),
});

/** At most this many projects per user: the prompt lists them, and a runaway model must not flood it. */

/** The user's projects, oldest first, as a query (a prompt reads it in the turn's one batch). */
export function projectsQuery(db: Db, userId: string, opts: { includeArchived: boolean }) {
  return db
    .select()
    .from(projects)
    .where(and(eq(projects.userId, userId), opts.includeArchived ? undefined : isNull(projects.archivedAt)))
    .orderBy(asc(projects.createdAt), asc(projects.id));
}

export async function listProjects(db: Db, userId: string, opts: { includeArchived: boolean }): Promise<ProjectRow[]> {
  return projectsQuery(db, userId, opts).all();
}

/** The user's project; another user's id is not found, exactly like an id that does not exist. */
export async function getProject(db: Db, userId: string, id: string): Promise<ProjectRow> {
  const row = await db
    .select()
    .from(projects)
    .where(and(eq(projects.id, id), eq(projects.userId, userId)))
    .get();
  if (!row) throw notFound("project");
  return row;
}

export const duplicateName = (name: string) =>
  new AppError("conflict", `a project named "${name}" already exists: pick another name, or use the existing project`);

/** Runs a batch that may break the unique name; a violation becomes the duplicate-name conflict. */
export async function guardName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isConstraintError(err)) throw duplicateName(name);
    throw err;
  }
}

/** `quota`: the plan's cap on projects (archived ones count until deleted). */
/** Names and descriptions go through the shared cleaner (invisible characters removed, secrets redacted) like every stored name. */
const cleanName = (name: string) => cleanMemoryText(name, 80, "name");
const cleanDescription = (d: string | null) => (d === null || d.trim() === "" ? d : cleanMemoryText(d, 1000, "description"));

export type CreateInput = Actor & { name: string; description: string | null; reason: string | null; fileSessionId?: string | null; quota: Quota };

/**
 * Creates a project. `fileSessionId`: the conversation the assistant created it in, filed under it when
 * that conversation has no project yet (its later turns then see the project's memory).
 */
export async function createProject(db: Db, raw: CreateInput): Promise<{ project: ProjectRow; filedSession: boolean; activityId: string }> {
  const input = { ...raw, name: cleanName(raw.name), description: cleanDescription(raw.description) };
  const id = newId("prj");
  const now = Date.now();
  const count = belowQuota(projects.userId, input.userId, input.quota.limit);
  const row = {
    id,
    userId: input.userId,
    name: input.name,
    description: input.description,
    createdBy: input.actor,
    reason: input.reason,
    createdAt: now,
    updatedAt: now,
  };
  const insert = insertWhere(db, projects, row, count).returning();
  const log = activityRow(db, input, {
    projectId: id,
    action: "create",
    summary: `Created project "${input.name}"`,
    detail: { name: input.name },
    undo: { op: "delete_created", project_id: id },
    // Only when the project row went in (the cap may have refused it).
    when: sql`EXISTS (SELECT 1 FROM projects WHERE id = ${id})`,
  });
  const file = input.fileSessionId
    ? db
        .update(sessions)
        .set({ projectId: id })
        .where(and(eq(sessions.id, input.fileSessionId), eq(sessions.userId, input.userId), isNull(sessions.projectId)))
        .returning({ id: sessions.id })
    : null;
  const [created, , filed] = await guardName(input.name, () => (file ? runBatch(db, insert, log.statement, file) : runBatch(db, insert, log.statement)));
  const project = created[0];
  if (!project) throw quotaExceeded(input.quota, " (archived ones count until deleted)");
  return { project, filedSession: (filed?.length ?? 0) > 0, activityId: log.id };
}

export type UpdateInput = Actor & { name?: string; description?: string | null; archived?: boolean; reason: string | null };

/** Renames, re-describes and/or archives one project; each change is its own activity entry (undone one by one). */
export async function updateProject(db: Db, projectId: string, raw: UpdateInput): Promise<{ project: ProjectRow; activityIds: string[] }> {
  const input = {
    ...raw,
    name: raw.name === undefined ? undefined : cleanName(raw.name),
    description: raw.description === undefined ? undefined : cleanDescription(raw.description),
  };
  const before = await getProject(db, input.userId, projectId);
  const now = Date.now();
  const logs: ReturnType<typeof activityRow>[] = [];
  // A project deleted meanwhile: the update finds nothing and no entry is logged.
  const exists = sql`EXISTS (SELECT 1 FROM projects WHERE id = ${projectId} AND user_id = ${input.userId})`;
  const set: Partial<typeof projects.$inferInsert> = {};
  if (input.name !== undefined && input.name !== before.name) {
    set.name = input.name;
    logs.push(
      activityRow(db, input, {
        projectId,
        action: "rename",
        summary: `Renamed project "${before.name}" to "${input.name}"`,
        detail: { from: before.name, to: input.name },
        undo: { op: "rename", project_id: projectId, name: before.name },
        when: exists,
      }),
    );
  }
  if (input.description !== undefined && input.description !== before.description) {
    set.description = input.description;
    logs.push(
      activityRow(db, input, {
        projectId,
        action: "describe",
        summary: `Changed the description of "${input.name ?? before.name}"`,
        detail: { from: before.description, to: input.description },
        undo: { op: "describe", project_id: projectId, description: before.description },
        when: exists,
      }),
    );
  }
  if (input.archived !== undefined && input.archived !== (before.archivedAt !== null)) {
    set.archivedAt = input.archived ? now : null;
    logs.push(
      activityRow(db, input, {
        projectId,
        action: input.archived ? "archive" : "unarchive",
        summary: `${input.archived ? "Archived" : "Unarchived"} project "${input.name ?? before.name}"`,
        detail: {},
        undo: { op: input.archived ? "unarchive" : "archive", project_id: projectId },
        when: exists,
      }),
    );
  }
  const [first, ...rest] = logs;
  if (!first) return { project: before, activityIds: [] };
  const update = db
    .update(projects)
    .set({ ...set, updatedAt: now })
    .where(and(eq(projects.id, projectId), eq(projects.userId, input.userId)))
    .returning();
  const [updated] = await guardName(input.name ?? before.name, () => runBatch(db, update, first.statement, ...rest.map((l) => l.statement)));
  const project = updated[0];
  if (!project) throw notFound("project");
  return { project, activityIds: logs.map((l) => l.id) };
}
