import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, newRouter, Ok, security } from "../http/openapi";
import type { StoredMessage } from "./history";
import { deleteSessionRow, getSession, listSessions, publicSession, sessionStub } from "./store";

const Session = z
  .object({
    id: z.string(),
    title: z.string().nullable(),
    site_id: z.string().nullable(),
    project_id: z.string().nullable(),
    message_count: z.number(),
    pending: z.boolean(),
    created_at: z.number(),
    updated_at: z.number(),
  })
  .openapi("Session");

const Message = z
  .object({ seq: z.number(), role: z.enum(["user", "assistant"]), content: z.unknown(), created_at: z.number() })
  .openapi("SessionMessage");

const IdParam = z.object({ id: z.string().min(1).max(100) });

const listRoute = createRoute({
  method: "get",
  path: "/v1/sessions",
  tags: ["sessions"],
  summary: "List your sessions, most recent first",
  security,
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(100).default(20),
      before: z.coerce.number().int().positive().optional().describe("updated_at cursor from the previous page"),
    }),
  },
  responses: { 200: json(z.object({ sessions: z.array(Session), next_before: z.number().nullable() }), "Sessions"), ...errors },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/sessions/{id}",
  tags: ["sessions"],
  summary: "A session and its full history",
  security,
  request: { params: IdParam },
  responses: { 200: json(z.object({ session: Session, messages: z.array(Message) }), "Session"), ...errors },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/v1/sessions/{id}",
  tags: ["sessions"],
  summary: "Delete a session and its history",
  security,
  request: { params: IdParam },
  responses: { 200: json(Ok, "Deleted"), ...errors },
});

export const sessionRoutes = newRouter()
  .openapi(listRoute, async (c) => {
    const { limit, before } = c.req.valid("query");
    const rows = await listSessions(c.var.db, c.var.user.id, limit, before);
    const next = rows.length === limit ? (rows.at(-1)?.updatedAt ?? null) : null;
    return c.json({ sessions: rows.map(publicSession), next_before: next }, 200);
  })
  .openapi(getRoute, async (c) => {
    const session = await getSession(c.var.db, c.var.user.id, c.req.valid("param").id);
    // RPC's structured-clone typing cannot express the SDK's content union; the value is the stored JSON.
    const messages = (await sessionStub(c.env, c.var.user.id, session.id).messages()) as unknown as StoredMessage[];
    return c.json({ session: publicSession(session), messages }, 200);
  })
  .openapi(deleteRoute, async (c) => {
    const session = await getSession(c.var.db, c.var.user.id, c.req.valid("param").id);
    await sessionStub(c.env, c.var.user.id, session.id).destroy();
    await deleteSessionRow(c.var.db, c.var.user.id, session.id);
    return c.json({ ok: true as const }, 200);
  });
