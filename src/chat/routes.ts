import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, jsonBody, newRouter, security } from "../http/openapi";
import { AppError, ErrorBody } from "../http/errors";
import { createSession, getSession, sessionStub } from "../sessions/store";
import { collectTurn, parseNdjson, sseFrame, type ChatEvent } from "./events";

const Id = z.string().trim().min(1).max(100).regex(/^[\w.:-]+$/, "may contain letters, digits, _ . : -");

export const ChatRequest = z
  .strictObject({
    message: z.string().trim().min(1, "message must not be empty").max(32_000),
    session_id: Id.optional(),
    site_id: Id.optional(),
    project_id: Id.optional(),
    stream: z.boolean().default(true),
    web_search: z.boolean().optional().describe("Accepted for old clients and ignored."),
  })
  .openapi("ChatRequest");

const ChatResponse = z
  .object({
    session_id: z.string(),
    reply: z.string(),
    stop_reason: z.string().optional(),
    usage: z.object({ input_tokens: z.number(), output_tokens: z.number() }).optional(),
    events: z.array(z.looseObject({ type: z.string() })),
  })
  .openapi("ChatTurn");

const chatRoute = createRoute({
  method: "post",
  path: "/v1/chat",
  tags: ["chat"],
  summary: "One chat turn: an SSE stream by default, JSON with stream:false",
  security,
  request: jsonBody(ChatRequest),
  responses: {
    200: {
      description: "SSE events `session`, `text`, `tool_use`, `tool_result`, `memory_saved`, ... ending with `done`, `tool_pending` or `error`; or the turn as JSON",
      content: { "text/event-stream": { schema: z.string() }, "application/json": { schema: ChatResponse } },
    },
    ...errors,
    502: json(ErrorBody, "The model failed (JSON mode)"),
  },
});

const sseHeaders = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" };

/** SSE bytes of the turn's events; when the client goes away, `onCancel` stops the turn. */
function toSse(events: ReadableStream<ChatEvent>, onCancel: () => Promise<void>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const reader = events.getReader();
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(sseFrame(value)));
    },
    async cancel() {
      await onCancel();
      await reader.cancel();
    },
  });
}

export const chatRoutes = newRouter().openapi(chatRoute, async (c) => {
  const body = c.req.valid("json");
  const { db, user } = c.var;
  const session = body.session_id
    ? await getSession(db, user.id, body.session_id)
    : await createSession(db, user.id, { title: body.message, siteId: body.site_id ?? null, projectId: body.project_id ?? null });
  const stub = sessionStub(c.env, user.id, session.id);
  const turnId = c.var.requestId;
  const bytes = await stub.turn({
    turnId,
    userId: user.id,
    plan: user.plan,
    sessionId: session.id,
    message: body.message,
    siteId: body.site_id ?? session.siteId,
    projectId: body.project_id ?? session.projectId,
  });
  const events = bytes.pipeThrough(parseNdjson());
  if (body.stream) {
    const sse = toSse(events, () => stub.cancelTurn(turnId));
    return new Response(sse, { headers: { ...sseHeaders, "x-request-id": c.var.requestId } });
  }

  const collected: ChatEvent[] = [];
  for await (const event of events) collected.push(event);
  const end = collected.at(-1);
  if (end?.type === "error") throw new AppError(end.code as ConstructorParameters<typeof AppError>[0], end.message);
  return c.json(collectTurn(collected) as z.infer<typeof ChatResponse>, 200);
});
