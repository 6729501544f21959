/** The projects API's shapes, written once: tools, routes, OpenAPI and responses use these. */
import { z } from "@hono/zod-openapi";
import { CursorParam } from "../db/cursor";
import { PROJECT_ACTIONS } from "../db/schema";
import { NO_FORMAT_CHARS, VISIBLE_LINE } from "../lib/visible";

/** One line of visible text: control and format characters would hide what a name really is. */
export const ProjectName = z.string().trim().min(1, "name is required").max(80).regex(VISIBLE_LINE, "may not contain control characters");
export const ProjectDescription = z.string().trim().max(1000).regex(NO_FORMAT_CHARS, "may not contain invisible characters");

export const ProjectIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: "id", in: "path" } }),
});

export const Project = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    created_by: z.enum(["user", "assistant"]),
    reason: z.string().nullable().describe("Why the assistant created it (null for yours)"),
    archived: z.boolean(),
    archived_at: z.number().nullable(),
    created_at: z.number(),
    updated_at: z.number(),
  })
  .openapi("Project");

export const NewProject = z.strictObject({ name: ProjectName, description: ProjectDescription.optional() }).openapi("NewProject");

export const ProjectPatch = z
  .strictObject({
    name: ProjectName.optional(),
    description: ProjectDescription.nullable().optional().describe("null clears it"),
    archived: z.boolean().optional().describe("Archive (soft: memory kept) or unarchive"),
  })
  .refine((v) => v.name !== undefined || v.description !== undefined || v.archived !== undefined, "give name, description or archived")
  .openapi("ProjectPatch");

export const MergeBody = z.strictObject({ into: z.string().min(1).max(100).describe("The project that receives everything") }).openapi("ProjectMerge");

export const MoveBody = z
  .strictObject({ project_id: z.string().min(1).max(100).nullable().describe("The project to move the memory to; null for user level") })
  .openapi("MemoryMove");

export const Moved = z
  .object({
    facts: z.number(),
    memory_entries: z.number(),
    proposals: z.number(),
    observations: z.number(),
    sessions: z.number(),
    lessons: z.number(),
  })
  .openapi("ProjectMoved");

export const Activity = z
  .object({
    id: z.string(),
    project_id: z.string().nullable(),
    action: z.enum(PROJECT_ACTIONS),
    actor: z.enum(["assistant", "user"]),
    reason: z.string().nullable(),
    summary: z.string(),
    detail: z.record(z.string(), z.unknown()),
    session_id: z.string().nullable(),
    undoable: z.boolean(),
    undone_at: z.number().nullable(),
    created_at: z.number(),
  })
  .openapi("ProjectActivity");

export const ActivityQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  before: CursorParam,
  project_id: z.string().min(1).max(100).optional().describe("Only this project's entries"),
});

export const ListQuery = z.object({
  include_archived: z.enum(["true", "false"]).default("false").describe("Archived projects too"),
});
