/**
 * The project tools the assistant calls. It may create projects and organise its own freely; anything
 * that changes a project the user created (rename, merge, archive, moving a memory in or out of it)
 * waits for the user's approval through the tool bridge. Every call shows in the stream with its reason,
 * and every change lands in the activity log, where the user can undo it.
 */
import { z } from "zod";
import { quotaOf } from "../config/limits";
import { defineTool, ReasonText, type ToolContext, type ToolResult } from "../core/tool";
import { AppError } from "../lib/errors";
import { findMemory, mergeProjects, moveMemory } from "./moves";
import { ProjectDescription, ProjectName } from "./schemas";
import { createProject, getProject, listProjects, updateProject } from "./store";
import { placeMemory, SUGGESTION_THRESHOLD } from "./suggest";

/** Per turn: a runaway model creates at most this many projects, and changes at most this many things. */
export const CREATES_PER_TURN = 2;
export const CHANGES_PER_TURN = 5;

const Reason = ReasonText.min(1).describe("Why, in a sentence the user will see");
const ProjectId = z.string().trim().min(1).max(100);
const USER_LEVEL = "user";

const assistant = (ctx: ToolContext, reason: string | null = null) => ({ userId: ctx.userId, actor: "assistant" as const, sessionId: ctx.sessionId, reason });

/** Counts one change against the turn's cap; an error result when it is used up. */
function spend(ctx: ToolContext, key: string, cap: number): ToolResult | null {
  const used = ctx.turn.get(key) ?? 0;
  if (used >= cap) return { content: `At most ${cap} of these per turn; nothing was changed. Ask the user before reorganising further.`, isError: true };
  ctx.turn.set(key, used + 1);
  return null;
}

/** Expected failures (not found, duplicate name, limits) are results the model can read and act on. */
async function attempt(work: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError && err.code !== "internal") return { content: err.message, isError: true };
    throw err;
  }
}

/** True when the project exists and the user made it; a missing project needs no approval (the tool reports it). */
async function userMade(ctx: ToolContext, projectId: string | null): Promise<boolean> {
  if (!projectId || projectId === USER_LEVEL) return false;
  const p = await getProject(ctx.db, ctx.userId, projectId).catch(() => null);
  return p?.createdBy === "user";
}

const APPROVAL_NOTE = "Projects the user created are theirs: changing one pauses for the user's approval.";

export const listProjectsTool = defineTool({
  name: "list_projects",
  description: "List the user's projects (id, name, description, who created it) to see how their work is organised before creating or filing anything.",
  input: z.object({}),
  runs: "server",
  needsApproval: false,
  describe: () => "Looking at your projects",
  async run(ctx) {
    const rows = await listProjects(ctx.db, ctx.userId, { includeArchived: false });
    const projects = rows.map((p) => ({ id: p.id, name: p.name, description: p.description, created_by: p.createdBy }));
    return { content: JSON.stringify({ projects, count: projects.length, current_project_id: ctx.projectId }) };
  },
});

export const createProjectTool = defineTool({
  name: "create_project",
  description:
    "Create a project when a distinct goal, initiative or domain emerges that deserves its own context. Use " +
    "sparingly: not for single questions or quick tasks, and not when an existing project fits (check list_projects). " +
    "When this conversation has no project yet, it is filed under the new one. Tell the user why.",
  input: z.object({
    name: ProjectName.describe("Short, descriptive project name"),
    description: ProjectDescription.optional().describe("Brief description of the project's scope"),
    reason: Reason.describe("Why this warrants a new project (shown to the user)"),
  }),
  runs: "server",
  needsApproval: false,
  describe: (input) => `Creating project "${input.name}": ${input.reason}`,
  run: (ctx, input) =>
    attempt(async () => {
      const capped = spend(ctx, "projects.creates", CREATES_PER_TURN);
      if (capped) return capped;
      const { project, filedSession } = await createProject(ctx.db, {
        ...assistant(ctx, input.reason),
        name: input.name,
        description: input.description ?? null,
        fileSessionId: ctx.projectId ? null : ctx.sessionId,
        quota: quotaOf(ctx.config.quotas, ctx.plan, "projects"),
      });
      // The rest of this turn's tool calls (e.g. an observation about the new goal) belong to the project too.
      if (filedSession) ctx.projectId = project.id;
      const filed = filedSession ? " This conversation is now filed under it." : "";
      return { content: `Created project "${project.name}" (${project.id}).${filed} The user can rename, merge or undo it.` };
    }),
});

export const suggestProjectTool = defineTool({
  name: "suggest_project_for_memory",
  description:
    `Save a durable memory and say which project it belongs to (a project id from list_projects), or "user" ` +
    `when it cuts across projects. With confidence ${SUGGESTION_THRESHOLD} or more the memory is filed under ` +
    `the project; below that it stays at user level and your suggestion is kept for the user to review.`,
  input: z.object({
    memory_content: z.string().trim().min(1).max(2000).describe("The memory, self-contained, in the third person"),
    suggested_project_id: ProjectId.describe('A project id, or "user" for user level'),
    confidence: z.number().min(0).max(1).describe("0-1 confidence in the suggestion"),
    reason: ReasonText.optional(),
  }),
  runs: "server",
  needsApproval: false,
  describe: (input) =>
    input.suggested_project_id === USER_LEVEL ? "Remembering this for all your projects" : `Filing a memory (confidence ${input.confidence})`,
  run: (ctx, input) =>
    attempt(async () => {
      const placed = await placeMemory(ctx, assistant(ctx), {
        content: input.memory_content,
        projectId: input.suggested_project_id === USER_LEVEL ? null : input.suggested_project_id,
        confidence: input.confidence,
        reason: input.reason ?? null,
      });
      ctx.emit({ type: "memory_saved", target: "fact", entry_id: placed.factId });
      if (placed.scoped) return { content: `Saved (${placed.factId}) under project "${placed.projectName}".` };
      if (placed.projectName)
        return {
          content:
            `Saved (${placed.factId}) at user level: confidence ${input.confidence} is under ${SUGGESTION_THRESHOLD}, ` +
            `so "${placed.projectName}" is only a suggestion the user can review.`,
        };
      return { content: `Saved (${placed.factId}) at user level.` };
    }),
});

export const renameProjectTool = defineTool({
  name: "rename_project",
  description: `Rename a project or change its description. ${APPROVAL_NOTE}`,
  input: z
    .object({ project_id: ProjectId, name: ProjectName.optional(), description: ProjectDescription.optional(), reason: Reason })
    .refine((v) => v.name !== undefined || v.description !== undefined, "give name or description"),
  runs: "server",
  needsApproval: (ctx, input) => userMade(ctx, input.project_id),
  describe: (input) => (input.name ? `Renaming a project to "${input.name}": ${input.reason}` : `Describing a project: ${input.reason}`),
  run: (ctx, input) =>
    attempt(async () => {
      const capped = spend(ctx, "projects.changes", CHANGES_PER_TURN);
      if (capped) return capped;
      const { project } = await updateProject(ctx.db, input.project_id, { ...assistant(ctx, input.reason), name: input.name, description: input.description });
      return { content: `Project ${project.id} is now "${project.name}"${project.description ? `: ${project.description}` : ""}.` };
    }),
});

export const mergeProjectsTool = defineTool({
  name: "merge_projects",
  description:
    `Merge one project into another: its memories, conversations and lessons move to the target and the source ` +
    `project is removed. Only for projects that are clearly the same effort. ${APPROVAL_NOTE}`,
  input: z.object({ source_project_id: ProjectId, target_project_id: ProjectId, reason: Reason }),
  runs: "server",
  needsApproval: async (ctx, input) => (await userMade(ctx, input.source_project_id)) || (await userMade(ctx, input.target_project_id)),
  describe: (input) => `Merging two projects: ${input.reason}`,
  run: (ctx, input) =>
    attempt(async () => {
      const capped = spend(ctx, "projects.changes", CHANGES_PER_TURN);
      if (capped) return capped;
      const r = await mergeProjects(ctx.db, input.source_project_id, input.target_project_id, assistant(ctx, input.reason));
      return { content: `Merged "${r.source.name}" into "${r.target.name}" (${Object.values(r.moved).reduce((n, ids) => n + ids.length, 0)} items moved).` };
    }),
});

export const archiveProjectTool = defineTool({
  name: "archive_project",
  description: `Archive a finished or abandoned project (soft: its memory is kept and it can be unarchived). ${APPROVAL_NOTE}`,
  input: z.object({ project_id: ProjectId, reason: Reason }),
  runs: "server",
  needsApproval: (ctx, input) => userMade(ctx, input.project_id),
  describe: (input) => `Archiving a project: ${input.reason}`,
  run: (ctx, input) =>
    attempt(async () => {
      const capped = spend(ctx, "projects.changes", CHANGES_PER_TURN);
      if (capped) return capped;
      const { project } = await updateProject(ctx.db, input.project_id, { ...assistant(ctx, input.reason), archived: true });
      return { content: `Archived "${project.name}".` };
    }),
});

export const moveMemoryTool = defineTool({
  name: "move_memory",
  description: `Move one memory (a fact or MEMORY entry, by id) to another project, or to user level with "user". ${APPROVAL_NOTE}`,
  input: z.object({ memory_id: z.string().trim().min(1).max(100), project_id: ProjectId.describe('A project id, or "user"'), reason: Reason }),
  runs: "server",
  async needsApproval(ctx, input) {
    const memory = await findMemory(ctx.db, ctx.userId, input.memory_id).catch(() => null);
    return (await userMade(ctx, memory?.projectId ?? null)) || (await userMade(ctx, input.project_id));
  },
  describe: (input) => `Moving a memory ${input.project_id === USER_LEVEL ? "to user level" : "to another project"}: ${input.reason}`,
  run: (ctx, input) =>
    attempt(async () => {
      const capped = spend(ctx, "projects.changes", CHANGES_PER_TURN);
      if (capped) return capped;
      const to = input.project_id === USER_LEVEL ? null : input.project_id;
      await moveMemory(ctx.db, input.memory_id, to, assistant(ctx, input.reason));
      return { content: `Moved ${input.memory_id} to ${to ? `project ${to}` : "user level"}.` };
    }),
});

export const projectTools = [listProjectsTool, createProjectTool, suggestProjectTool, renameProjectTool, mergeProjectsTool, archiveProjectTool, moveMemoryTool];
