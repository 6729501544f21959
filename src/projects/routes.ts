/**
 * The user's control over projects: create, rename, describe, archive, merge, delete, move a memory, and
 * the activity log with undo. The user acts directly (no approval); every change is logged like the
 * assistant's. Another user's project, memory or entry is a 404, exactly like one that does not exist.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { quotaOf } from "../config/limits";
import { nextCursor } from "../db/cursor";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, quotaErrors, security } from "../http/openapi";
import { listActivity, publicActivity, undoActivity } from "./activity";
import { counts, deleteProject, mergeProjects, moveMemory } from "./moves";
import { Activity, ActivityQuery, ListQuery, MergeBody, MoveBody, Moved, NewProject, Project, ProjectIdParam, ProjectPatch } from "./schemas";
import { createProject, getProject, listProjects, publicProject, updateProject } from "./store";

const tags = ["projects"];
const conflict = (what: string) => ({ 409: json(ErrorBody, what) });
const user = (userId: string) => ({ userId, actor: "user" as const, reason: null });

const listRoute = createRoute({
  method: "get",
  path: "/v1/projects",
  operationId: "listProjects",
  tags,
  summary: "Your projects, oldest first",
  security,
  request: { query: ListQuery },
  responses: { 200: json(z.object({ projects: z.array(Project) }), "Projects"), ...errors },
});

const createRouteDef = createRoute({
  method: "post",
  path: "/v1/projects",
  operationId: "createProject",
  tags,
  summary: "Create a project",
  description: "Your plan caps how many projects you hold, archived ones included (403 quota_exceeded, nothing written).",
  security,
  request: jsonBody(NewProject),
  responses: {
    201: json(Project, "Created"),
    ...errors,
    ...quotaErrors,
    ...conflict("A project with this name (ignoring case) exists, archived ones included"),
  },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/projects/{id}",
  operationId: "getProject",
  tags,
  summary: "One project",
  security,
  request: { params: ProjectIdParam },
  responses: { 200: json(Project, "The project"), ...errors },
});

const patchRoute = createRoute({
  method: "patch",
  path: "/v1/projects/{id}",
  operationId: "updateProject",
  tags,
  summary: "Rename, describe, archive or unarchive a project",
  description: "Archiving is soft: the project's memory is kept, and its conversations keep pointing at it; new chats cannot pick it until it is unarchived.",
  security,
  request: { params: ProjectIdParam, ...jsonBody(ProjectPatch) },
  responses: { 200: json(Project, "Updated"), ...errors, ...conflict("The new name is taken") },
});

const mergeRoute = createRoute({
  method: "post",
  path: "/v1/projects/{id}/merge",
  operationId: "mergeProject",
  tags,
  summary: "Merge this project into another",
  description:
    "Moves this project's facts, MEMORY entries, pending proposals, unconsolidated observations and conversations " +
    "into `into`, relabels its coding lessons with the target's name, and removes this project. Undoable " +
    "from the activity log.",
  security,
  request: { params: ProjectIdParam, ...jsonBody(MergeBody) },
  responses: { 200: json(z.object({ project: Project, moved: Moved }), "Merged; `project` is the target"), ...errors },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/v1/projects/{id}",
  operationId: "deleteProject",
  tags,
  summary: "Delete a project; its memory moves to user level",
  description: "Nothing is lost: facts, MEMORY entries, proposals, observations and conversations move to user level. Undoable from the activity log.",
  security,
  request: { params: ProjectIdParam },
  responses: { 200: json(z.object({ deleted: z.string(), moved: Moved }), "Deleted"), ...errors },
});

const moveRoute = createRoute({
  method: "post",
  path: "/v1/projects/memories/{id}/move",
  operationId: "moveMemory",
  tags,
  summary: "Move one memory (a fact or MEMORY entry) to a project, or to user level",
  security,
  request: { params: ProjectIdParam, ...jsonBody(MoveBody) },
  responses: {
    200: json(z.object({ memory_id: z.string(), kind: z.enum(["fact", "memory_entry"]), from: z.string().nullable(), to: z.string().nullable() }), "Moved"),
    ...errors,
  },
});

const activityRoute = createRoute({
  method: "get",
  path: "/v1/projects/activity",
  operationId: "listProjectActivity",
  tags,
  summary: "What was done to your projects, by you or the assistant, newest first",
  description: "Includes the assistant's weak project suggestions (action `suggest_memory`), kept for your review.",
  security,
  request: { query: ActivityQuery },
  responses: { 200: json(z.object({ activity: z.array(Activity), next_before: z.string().nullable() }), "Entries"), ...errors },
});

const undoRoute = createRoute({
  method: "post",
  path: "/v1/projects/activity/{id}/undo",
  operationId: "undoProjectActivity",
  tags,
  summary: "Undo one change",
  description:
    "One-shot. Refused (409) when it was already undone, cannot be undone, or later changes make it impossible " +
    "(e.g. the name was taken since). Undoing a merge or delete brings the project back: past your plan's " +
    "project cap it is refused (403 quota_exceeded, nothing changed, still undoable).",
  security,
  request: { params: ProjectIdParam },
  responses: { 200: json(Activity, "Undone"), ...errors, ...quotaErrors, ...conflict("Already undone, not undoable, or no longer possible") },
});

export const projectRoutes = newRouter()
  // Literal paths first: /v1/projects/activity is not a project id.
  .openapi(activityRoute, async (c) => {
    const q = c.req.valid("query");
    const rows = await listActivity(c.var.db, c.var.user.id, { limit: q.limit, before: q.before, projectId: q.project_id });
    return c.json({ activity: rows.map(publicActivity), next_before: nextCursor(rows, q.limit, (r) => [r.createdAt, r.id]) }, 200);
  })
  .openapi(undoRoute, async (c) => {
    const undone = await undoActivity(c.var.db, c.var.user.id, c.req.valid("param").id, quotaOf(c.var.config.quotas, c.var.user.plan, "projects"));
    return c.json(publicActivity(undone), 200);
  })
  .openapi(moveRoute, async (c) => {
    const id = c.req.valid("param").id;
    const r = await moveMemory(c.var.db, id, c.req.valid("json").project_id, user(c.var.user.id));
    return c.json({ memory_id: id, kind: r.kind, from: r.from, to: r.to }, 200);
  })
  .openapi(listRoute, async (c) => {
    const rows = await listProjects(c.var.db, c.var.user.id, { includeArchived: c.req.valid("query").include_archived === "true" });
    return c.json({ projects: rows.map(publicProject) }, 200);
  })
  .openapi(createRouteDef, async (c) => {
    const body = c.req.valid("json");
    const quota = quotaOf(c.var.config.quotas, c.var.user.plan, "projects");
    const { project } = await createProject(c.var.db, { ...user(c.var.user.id), name: body.name, description: body.description ?? null, quota });
    return c.json(publicProject(project), 201);
  })
  .openapi(getRoute, async (c) => c.json(publicProject(await getProject(c.var.db, c.var.user.id, c.req.valid("param").id)), 200))
  .openapi(patchRoute, async (c) => {
    const body = c.req.valid("json");
    const { project } = await updateProject(c.var.db, c.req.valid("param").id, { ...user(c.var.user.id), ...body });
    return c.json(publicProject(project), 200);
  })
  .openapi(mergeRoute, async (c) => {
    const r = await mergeProjects(c.var.db, c.req.valid("param").id, c.req.valid("json").into, user(c.var.user.id));
    return c.json({ project: publicProject(await getProject(c.var.db, c.var.user.id, r.target.id)), moved: counts(r.moved) }, 200);
  })
  .openapi(deleteRoute, async (c) => {
    const r = await deleteProject(c.var.db, c.req.valid("param").id, user(c.var.user.id));
    return c.json({ deleted: r.project.id, moved: counts(r.moved) }, 200);
  });
