/** MEMORY entries: list, add (same sanitizing and limits as the tool), delete. */
import { createRoute, z } from "@hono/zod-openapi";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, Ok, security } from "../http/openapi";
import { BRAIN_LIMITS } from "./limits";
import { addMemory, countEntries, deleteMemory, listMemory, publicEntry } from "./memory";
import { MemoryEntry, MemoryPageQuery, NewMemory, SiteId } from "./schemas";

const listRoute = createRoute({
  method: "get",
  path: "/v1/brain/memory",
  operationId: "listMemoryEntries",
  tags: ["brain"],
  summary: "Your MEMORY entries, newest first",
  security,
  request: { query: MemoryPageQuery.extend({ site: SiteId.optional().describe("Only entries made about this site") }) },
  responses: {
    200: json(
      z.object({
        entries: z.array(MemoryEntry),
        total: z.number(),
        cap: z.number().describe("The plan's entry limit"),
        next_before: z.string().nullable().describe("Pass as before= for the next page"),
      }),
      "Entries",
    ),
    ...errors,
  },
});

const addRoute = createRoute({
  method: "post",
  path: "/v1/brain/memory",
  operationId: "createMemoryEntry",
  tags: ["brain"],
  summary: "Add a MEMORY entry (an entry about a site registers the site)",
  security,
  request: jsonBody(NewMemory),
  responses: {
    201: json(MemoryEntry, "Added"),
    ...errors,
    404: json(ErrorBody, "project_id is not one of your projects"),
    403: json(ErrorBody, "The entry's site would be over the plan's site limit (quota_exceeded); nothing was written"),
    409: json(ErrorBody, "MEMORY is full for your plan"),
    413: json(ErrorBody, "The entry is over the plan's length limit"),
  },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/v1/brain/memory/{id}",
  operationId: "deleteMemoryEntry",
  tags: ["brain"],
  summary: "Delete a MEMORY entry",
  security,
  request: { params: z.object({ id: z.string().min(1).max(100) }) },
  responses: { 200: json(Ok, "Deleted"), ...errors },
});

export const memoryRoutes = newRouter()
  .openapi(listRoute, async (c) => {
    const { db, user } = c.var;
    const [page, total] = await Promise.all([listMemory(db, user.id, c.req.valid("query")), countEntries(db, user.id)]);
    return c.json({ entries: page.entries.map(publicEntry), total, cap: BRAIN_LIMITS[user.plan].memoryEntries, next_before: page.next_before }, 200);
  })
  .openapi(addRoute, async (c) => {
    const body = c.req.valid("json");
    const { db, user } = c.var;
    const entry = await addMemory(db, {
      userId: user.id,
      plan: user.plan,
      content: body.content,
      site: body.site ?? null,
      projectId: body.project_id ?? null,
      author: "user",
      sessionId: null,
    });
    return c.json(publicEntry(entry), 201);
  })
  .openapi(deleteRoute, async (c) => {
    await deleteMemory(c.var.db, c.var.user.id, c.req.valid("param").id);
    return c.json({ ok: true as const }, 200);
  });
