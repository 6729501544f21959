/**
 * What belongs to a project, and moving it: merging one project into another, deleting a project (its
 * memory goes to user level, never lost), and moving one memory. A project's memory is its facts,
 * MEMORY entries, pending MEMORY proposals, observations not yet consolidated, and its conversations;
 * coding lessons name their project by name (the repository a transcript came from), so a merge relabels
 * them. Each operation is one D1 batch that also records which rows moved, so an undo moves exactly those back.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import { type Quota, quotaExceeded } from "../config/limits";
import { changes, returnedIds, runBatch, runStatements, type Statement } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { inJson } from "../db/in-json";
import { insertWhere } from "../db/insert-where";
import { snakeRow } from "../db/public-row";
import { belowQuota } from "../db/quota";
import { brainEntries, brainProposals, contextEvents, facts, type JsonObject, lessons, projects, sessions } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { type Actor, activityRow, tick } from "./activity-row";
import { getProject, guardName, type ProjectRow } from "./store";

export type Moved = { facts: string[]; entries: string[]; proposals: string[]; observations: string[]; sessions: string[]; lessons: string[] };

/** Statements moving everything of `from` (a project id) to `to` (a project id, or null: user level), RETURNING the moved ids. */
function moveAll(db: Db, userId: string, from: string, to: string | null) {
  return [
    db
      .update(facts)
      .set({ projectId: to, metadata: sql`json_set(${facts.metadata}, '$.project_id', ${to})` })
      .where(and(eq(facts.userId, userId), eq(facts.projectId, from)))
      .returning({ id: facts.id }),
    db
      .update(brainEntries)
      .set({ projectId: to })
      .where(and(eq(brainEntries.userId, userId), eq(brainEntries.projectId, from)))
      .returning({ id: brainEntries.id }),
    db
      .update(brainProposals)
      .set({ projectId: to })
      .where(and(eq(brainProposals.userId, userId), eq(brainProposals.projectId, from), eq(brainProposals.status, "pending")))
      .returning({ id: brainProposals.id }),
    // Observations still waiting for consolidation carry their project in their source metadata.
    db
      .update(contextEvents)
      .set({ sourceMetadata: sql`json_set(${contextEvents.sourceMetadata}, '$.project_id', ${to})` })
      .where(
        and(eq(contextEvents.userId, userId), eq(contextEvents.processed, false), sql`json_extract(${contextEvents.sourceMetadata}, '$.project_id') = ${from}`),
      )
      .returning({ id: contextEvents.id }),
    db
      .update(sessions)
      .set({ projectId: to })
      .where(and(eq(sessions.userId, userId), eq(sessions.projectId, from)))
      .returning({ id: sessions.id }),
  ] as const;
}

const sameName = (userId: string, name: string): SQL => and(eq(lessons.userId, userId), sql`lower(${lessons.project}) = lower(${name})`) ?? sql`0`;

export type MergeInput = Actor & { reason: string | null };

/**
 * What a merge or delete will move, as a JSON value computed inside the batch before the moves run (a batch is
 * one transaction): the activity entry, written first, records exactly the rows that then move.
 */
function snapshot(userId: string, from: string, lessonsOf: string | null): SQL {
  const idsOf = (table: string, extra = sql``) =>
    sql`(SELECT json_group_array(id) FROM ${sql.identifier(table)} WHERE user_id = ${userId} AND project_id = ${from}${extra})`;
  const lessonIds = lessonsOf
    ? sql`(SELECT json_group_array(id) FROM lessons WHERE user_id = ${userId} AND lower(project) = lower(${lessonsOf}))`
    : sql`json_array()`;
  return sql`json_object(
    'facts', json(${idsOf("facts")}),
    'entries', json(${idsOf("brain_entries")}),
    'proposals', json(${idsOf("brain_proposals", sql` AND status = 'pending'`)}),
    'observations', json((SELECT json_group_array(id) FROM context_events
      WHERE user_id = ${userId} AND processed = 0 AND json_extract(source_metadata, '$.project_id') = ${from})),
    'sessions', json(${idsOf("sessions")}),
    'lessons', json(${lessonIds}))`;
}

type Logged = { id: string; statement: SQL };

/** The activity entry of a merge or delete, with its undo recipe built from the snapshot. */
function movesEntry(
  input: MergeInput,
  e: {
    action: "merge" | "delete";
    project: ProjectRow;
    logProject: string;
    summary: string;
    detail: JsonObject;
    undoExtra: JsonObject;
    lessonsOf: string | null;
  },
): Logged {
  const id = newId("pac");
  const moved = snapshot(input.userId, e.project.id, e.lessonsOf);
  const undo = sql`json_patch(${JSON.stringify({ op: "restore", project: rowJson(e.project), ...e.undoExtra })}, json_object('moved', json(m.moved)))`;
  const statement = sql`INSERT INTO project_activity (id, user_id, project_id, action, actor, reason, summary, detail, undo, session_id, undone_at, created_at)
    SELECT ${id}, ${input.userId}, ${e.logProject}, ${e.action}, ${input.actor}, ${input.reason}, ${e.summary}, ${JSON.stringify(e.detail)}, ${undo},
      ${input.sessionId ?? null}, NULL, ${tick()}
    FROM (SELECT ${moved} AS moved) m
    WHERE EXISTS (SELECT 1 FROM projects WHERE id = ${e.project.id} AND user_id = ${input.userId})`;
  return { id, statement };
}

/** Runs a merge or delete: the entry, the moves, the removal of the project. Returns each move's ids, in order. */
async function runMoves(db: Db, userId: string, log: Logged, moves: readonly Statement[], projectId: string): Promise<string[][]> {
  const remove = db
    .delete(projects)
    .where(and(eq(projects.id, projectId), eq(projects.userId, userId)))
    .returning({ id: projects.id });
  const results = (await runStatements(db, [log.statement, ...moves, remove])).map(returnedIds);
  if (!results.at(-1)?.length) throw notFound("project");
  return results.slice(1, -1);
}

const movedOf = ([facts = [], entries = [], proposals = [], observations = [], sessions = [], lessons = []]: string[][]): Moved => ({
  facts,
  entries,
  proposals,
  observations,
  sessions,
  lessons,
});

/** Moves everything of `sourceId` into `targetId`, then removes the source project. */
export async function mergeProjects(db: Db, sourceId: string, targetId: string, input: MergeInput) {
  if (sourceId === targetId) throw new AppError("invalid_request", "a project cannot be merged into itself");
  const [source, target] = await Promise.all([getProject(db, input.userId, sourceId), getProject(db, input.userId, targetId)]);
  const relabel = db.update(lessons).set({ project: target.name }).where(sameName(input.userId, source.name)).returning({ id: lessons.id });
  const log = movesEntry(input, {
    action: "merge",
    project: source,
    logProject: target.id,
    summary: `Merged project "${source.name}" into "${target.name}"`,
    detail: { source: source.id, source_name: source.name, target: target.id, target_name: target.name },
    undoExtra: { lessons_to: source.name },
    lessonsOf: source.name,
  });
  const moved = movedOf(await runMoves(db, input.userId, log, [...moveAll(db, input.userId, source.id, target.id), relabel], source.id));
  return { source, target, moved, activityId: log.id };
}

/** Deletes a project; its memory and conversations move to user level. */
export async function deleteProject(db: Db, projectId: string, input: MergeInput) {
  const project = await getProject(db, input.userId, projectId);
  const log = movesEntry(input, {
    action: "delete",
    project,
    logProject: project.id,
    summary: `Deleted project "${project.name}"; its memory moved to user level`,
    detail: { name: project.name },
    undoExtra: {},
    lessonsOf: null,
  });
  const moved = movedOf(await runMoves(db, input.userId, log, moveAll(db, input.userId, project.id, null), project.id));
  return { project, moved, activityId: log.id };
}

export const counts = (m: Moved) => ({
  facts: m.facts.length,
  memory_entries: m.entries.length,
  proposals: m.proposals.length,
  observations: m.observations.length,
  sessions: m.sessions.length,
  lessons: m.lessons.length,
});

const rowJson = (p: ProjectRow): JsonObject => snakeRow(p, ["id", "name", "description", "createdBy", "reason", "archivedAt", "createdAt"]);

/**
 * Puts a merged or deleted project back, with exactly the rows that moved out of it. The project counts
 * again at the plan's cap: past it, nothing changes (403 `quota_exceeded`) and the entry stays undoable.
 */
export async function restoreProject(db: Db, userId: string, undo: JsonObject, quota: Quota) {
  const p = undo.project as JsonObject;
  const moved = undo.moved as unknown as Moved;
  const id = String(p.id);
  const name = String(p.name);
  const now = Date.now();
  const row = {
    id,
    userId,
    name,
    description: (p.description as string | null) ?? null,
    createdBy: p.created_by === "assistant" ? ("assistant" as const) : ("user" as const),
    reason: (p.reason as string | null) ?? null,
    archivedAt: (p.archived_at as number | null) ?? null,
    createdAt: Number(p.created_at),
    updatedAt: now,
  };
  // Every move back waits on the project row: when the cap refused it, the batch changes nothing.
  const restored = sql`EXISTS (SELECT 1 FROM projects WHERE id = ${id} AND user_id = ${userId})`;
  const statements: Statement[] = [
    insertWhere(db, projects, row, belowQuota(projects.userId, userId, quota.limit)),
    ...(moved.facts.length
      ? [
          db
            .update(facts)
            .set({ projectId: id, metadata: sql`json_set(${facts.metadata}, '$.project_id', ${id})` })
            .where(and(eq(facts.userId, userId), inJson(facts.id, moved.facts), restored)),
        ]
      : []),
    ...(moved.entries.length
      ? [
          db
            .update(brainEntries)
            .set({ projectId: id })
            .where(and(eq(brainEntries.userId, userId), inJson(brainEntries.id, moved.entries), restored)),
        ]
      : []),
    ...(moved.proposals.length
      ? [
          db
            .update(brainProposals)
            .set({ projectId: id })
            .where(and(eq(brainProposals.userId, userId), inJson(brainProposals.id, moved.proposals), restored)),
        ]
      : []),
    ...(moved.sessions.length
      ? [
          db
            .update(sessions)
            .set({ projectId: id })
            .where(and(eq(sessions.userId, userId), inJson(sessions.id, moved.sessions), restored)),
        ]
      : []),
    ...(moved.observations.length
      ? [
          db
            .update(contextEvents)
            .set({ sourceMetadata: sql`json_set(${contextEvents.sourceMetadata}, '$.project_id', ${id})` })
            .where(and(eq(contextEvents.userId, userId), inJson(contextEvents.id, moved.observations), eq(contextEvents.processed, false), restored)),
        ]
      : []),
    ...(moved.lessons.length && typeof undo.lessons_to === "string"
      ? [
          db
            .update(lessons)
            .set({ project: undo.lessons_to })
            .where(and(eq(lessons.userId, userId), inJson(lessons.id, moved.lessons), restored)),
        ]
      : []),
  ];
  const [inserted] = await guardName(name, () => runStatements(db, statements));
  if (!changes(inserted)) throw quotaExceeded(quota, " (archived ones count until deleted)");
}

export type MemoryKind = "fact" | "memory_entry";

/** Where one memory is: a fact or a MEMORY entry of the user's, by id. */
export async function findMemory(db: Db, userId: string, memoryId: string): Promise<{ kind: MemoryKind; projectId: string | null; text: string }> {
  const [fact, entry] = await db.batch([
    db
      .select({ projectId: facts.projectId, text: facts.text })
      .from(facts)
      .where(and(eq(facts.id, memoryId), eq(facts.userId, userId))),
    db
      .select({ projectId: brainEntries.projectId, text: brainEntries.content })
      .from(brainEntries)
      .where(and(eq(brainEntries.id, memoryId), eq(brainEntries.userId, userId))),
  ]);
  if (fact[0]) return { kind: "fact", ...fact[0] };
  if (entry[0]) return { kind: "memory_entry", ...entry[0] };
  throw notFound("memory");
}

/** The statement setting one memory's project (null: user level). */
export function setMemoryProject(db: Db, userId: string, kind: MemoryKind, memoryId: string, projectId: string | null) {
  return kind === "fact"
    ? db
        .update(facts)
        .set({ projectId, metadata: sql`json_set(${facts.metadata}, '$.project_id', ${projectId})` })
        .where(and(eq(facts.id, memoryId), eq(facts.userId, userId)))
        .returning({ id: facts.id })
    : db
        .update(brainEntries)
        .set({ projectId })
        .where(and(eq(brainEntries.id, memoryId), eq(brainEntries.userId, userId)))
        .returning({ id: brainEntries.id });
}

/** Moves one memory (a fact or MEMORY entry) to a project of the user's, or to user level (null). */
export async function moveMemory(db: Db, memoryId: string, projectId: string | null, input: MergeInput) {
  const memory = await findMemory(db, input.userId, memoryId);
  const target = projectId ? await getProject(db, input.userId, projectId) : null;
  const from = memory.projectId ? await getProject(db, input.userId, memory.projectId).catch(() => null) : null;
  const where = (p: ProjectRow | null) => (p ? `"${p.name}"` : "user level");
  const log = activityRow(db, input, {
    projectId: target?.id ?? memory.projectId,
    action: "move_memory",
    summary: `Moved a memory from ${where(from)} to ${where(target)}`,
    detail: { memory_id: memoryId, kind: memory.kind, from: memory.projectId, to: target?.id ?? null },
    undo: { op: "move", kind: memory.kind, memory_id: memoryId, project_id: memory.projectId },
  });
  const move = setMemoryProject(db, input.userId, memory.kind, memoryId, target?.id ?? null);
  const [moved] = await runBatch(db, move, log.statement);
  if (!moved.length) throw notFound("memory");
  return { kind: memory.kind, from: memory.projectId, to: target?.id ?? null, activityId: log.id };
}
