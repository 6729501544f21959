/**
 * GET /v1/sessions/{id}/stream: a client that lost engram's SSE stream reconnects here with the last event id it
 * read (`Last-Event-ID`, as EventSource sends it) and gets the rest of that segment, live while it runs, or all of
 * it once ended, from the events the session object holds (turn-log.ts). Nothing runs again.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ErrorBody } from "../http/errors";
import { errors, json, newRouter, security } from "../http/openapi";
import { AppError } from "../lib/errors";
import { sseHeaders } from "./chat-start";
import { parseEventId } from "./event-stream";
import { relay } from "./relay";
import { getSession, sessionStub } from "./store";

const streamRoute = createRoute({
  method: "get",
  path: "/v1/sessions/{id}/stream",
  operationId: "resumeStream",
  tags: ["sessions"],
  summary: "Resume a dropped chat stream after the last event id read (Last-Event-ID); without it, the latest segment from its start",
  security,
  request: {
    params: z.object({ id: z.string().trim().min(1, "session id must not be empty").max(100) }),
    headers: z.object({
      "last-event-id": z.string().max(120).optional().describe("The `id` of the last event read, e.g. `3f1c...:42`"),
    }),
  },
  responses: {
    200: {
      description: "The events after that one, each with its id, ending as the segment ends (`done`, `tool_pending` or `error`)",
      content: { "text/event-stream": { schema: z.string() } },
    },
    204: { description: "No stream of this session is held (none ran since its object started)" },
    ...errors,
    409: json(ErrorBody, "That stream is no longer held (a later turn replaced it, or it was too long to keep): read the session instead"),
  },
});

export const streamRoutes = newRouter().openapi(streamRoute, async (c) => {
  const session = await getSession(c.var.db, c.var.user.id, c.req.valid("param").id);
  const last = c.req.valid("header")["last-event-id"];
  const at = last ? parseEventId(last) : undefined;
  if (at === null) throw new AppError("invalid_request", "Last-Event-ID: not an event id of this API (`<turn>:<number>`)");
  const held = await sessionStub(c.env, c.var.user.id, session.id).reattach({ format: "sse", ...(at ? { turnId: at.turnId, after: at.seq } : {}) });
  if ("error" in held) throw new AppError(held.error.code, held.error.message);
  if ("none" in held) return c.body(null, 204);
  return new Response(relay(held.events), { headers: { ...sseHeaders, "x-request-id": c.var.requestId } });
});
