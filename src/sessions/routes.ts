import { createRoute, z } from "@hono/zod-openapi";
import { ToolResultRequest } from "../bridge/answer";
import { ToolPendingEnvelope } from "../core/events";
import type { Tool } from "../core/tool";
import { CursorParam, nextCursor } from "../db/cursor";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, Ok, orNull, security } from "../http/openapi";
import { AppError, notFound } from "../lib/errors";
import type { StoredMessage } from "./history";
import type { SessionSummary } from "./history-budget";
import { ChatResponse, turnErrors, turnResponse } from "./routes-chat";
import { streamRoutes } from "./routes-stream";
import type { PendingView } from "./session-do";
import { deleteSessionRow, destroySessionObject, getSession, listSessions, publicSession, reconcileSession, renameSession, sessionStub } from "./store";
import { toolReasons } from "./tool-reasons";

const Session = z
  .object({
    id: z.string(),
    title: z.string().nullable(),
    site_id: z.string().nullable(),
    project_id: z.string().nullable(),
    message_count: z.number(),
    pending: z.boolean().describe("A tool call is waiting for the client"),
    created_at: z.number(),
    updated_at: z.number(),
  })
  .openapi("Session");

const Message = z.object({ seq: z.number(), role: z.enum(["user", "assistant"]), content: z.unknown(), created_at: z.number() }).openapi("SessionMessage");

const Pending = ToolPendingEnvelope.extend({
  messages: z.array(z.unknown()).describe("The suspended assistant message, held back from history until every call is answered"),
  answered: z.array(z.object({ tool_use_id: z.string(), is_error: z.boolean() })).describe("Calls of that message already answered"),
}).openapi("PendingTurn");

const Summary = z
  .object({
    text: z.string().describe("The running summary of older turns, which model calls see instead of those turns"),
    through: z.number().describe("Messages with seq up to this one are summarised (they stay in `messages`)"),
    messages: z.number().describe("How many messages the summary covers"),
    updated_at: z.number(),
  })
  .openapi("SessionSummary");

const IdParam = z.object({ id: z.string().trim().min(1, "session id must not be empty").max(100) });

const conflict = { 409: json(ErrorBody, "Nothing pending, a mismatch with the pending call, or busy") };

const listRoute = createRoute({
  method: "get",
  path: "/v1/sessions",
  operationId: "listSessions",
  tags: ["sessions"],
  summary: "List your sessions, most recent first",
  security,
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(100).default(20),
      before: CursorParam,
    }),
  },
  responses: { 200: json(z.object({ sessions: z.array(Session), next_before: z.string().nullable() }), "Sessions"), ...errors },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/sessions/{id}",
  operationId: "getSession",
  tags: ["sessions"],
  summary: "A session, its full history and its pending tool call, if any",
  security,
  request: { params: IdParam },
  responses: {
    200: json(
      z.object({
        session: Session,
        messages: z.array(Message),
        pending: orNull(Pending),
        summary: orNull(Summary),
        tool_reasons: z
          .record(z.string(), z.string())
          .describe("What each tool call in `messages` and `pending` was doing (tool_use id -> the `reason` its `tool_use` event gave)"),
      }),
      "Session",
    ),
    ...errors,
  },
});

const renameRoute = createRoute({
  method: "patch",
  path: "/v1/sessions/{id}",
  operationId: "renameSession",
  tags: ["sessions"],
  summary: "Rename a session",
  security,
  request: { params: IdParam, ...jsonBody(z.strictObject({ title: z.string().trim().min(1, "title must not be empty").max(80) })) },
  responses: { 200: json(z.object({ session: Session }), "Renamed"), ...errors },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/v1/sessions/{id}",
  operationId: "deleteSession",
  tags: ["sessions"],
  summary: "Delete a session and its history",
  security,
  request: { params: IdParam },
  responses: { 200: json(Ok, "Deleted"), ...errors },
});

const toolResultRoute = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/tool_result",
  operationId: "resumeTurn",
  tags: ["sessions"],
  summary: "Resume a suspended turn with a client tool's result or an approval decision",
  description:
    "Answers one pending call. The turn continues and ends like a chat turn: a reply, or another tool_pending " +
    "envelope. SSE or JSON, as the suspended turn was unless `stream` says otherwise. If the model fails after the " +
    "answer, the answer stays in the conversation and sending the same answer again continues the turn without " +
    "running the tool again.",
  security,
  request: { params: IdParam, ...jsonBody(ToolResultRequest) },
  responses: {
    200: { description: "The resumed turn", content: { "text/event-stream": { schema: z.string() }, "application/json": { schema: ChatResponse } } },
    ...errors,
    ...turnErrors,
    ...conflict,
    410: json(ErrorBody, "The pending call expired, or the turn the model failed can no longer be continued (continuation_expired)"),
  },
});

const cancelRoute = createRoute({
  method: "delete",
  path: "/v1/sessions/{id}/pending",
  operationId: "cancelPendingTool",
  tags: ["sessions"],
  summary: "Cancel the pending tool call; the model sees it as cancelled on the next turn",
  security,
  request: { params: IdParam },
  responses: { 200: json(z.object({ ok: z.literal(true), cancelled: z.array(z.string()) }), "Cancelled"), ...errors, ...conflict },
});

const stopRoute = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/stop",
  operationId: "stopTurn",
  tags: ["sessions"],
  summary: "Stop the turn this session is answering; what it wrote so far is kept",
  description:
    "What a Stop button calls. Closing the stream alone does not reliably reach the server, so the turn could run " +
    "on to its end. The turn stops at its next step (a tool already running finishes first); a client still reading " +
    "its stream gets `done` with stop_reason `stopped` as the last event. Its partial reply stays in history, and " +
    "the session takes the next message as usual. `stopped` is 0 when nothing was running.",
  security,
  request: { params: IdParam },
  responses: { 200: json(z.object({ ok: z.literal(true), stopped: z.number().int() }), "Stopped"), ...errors },
});

export const sessionRoutes = (tools: readonly Tool[]) =>
  newRouter()
    .route("/", streamRoutes)
    .openapi(listRoute, async (c) => {
      const { limit, before } = c.req.valid("query");
      const rows = await listSessions(c.var.db, c.var.user.id, limit, before);
      return c.json({ sessions: rows.map(publicSession), next_before: nextCursor(rows, limit, (s) => [s.updatedAt, s.id]) }, 200);
    })
    .openapi(getRoute, async (c) => {
      const session = await getSession(c.var.db, c.var.user.id, c.req.valid("param").id);
      // RPC's structured-clone typing cannot express the SDK's content union; the value is the stored JSON.
      const state = (await sessionStub(c.env, c.var.user.id, session.id).read()) as unknown as {
        messages: StoredMessage[];
        pending: PendingView | null;
        summary: SessionSummary | null;
      } | null;
      // Deleted while this request was on its way.
      if (!state) throw notFound("session");
      const row = await reconcileSession(c.var.db, session, state.messages.length, state.pending !== null);
      const tool_reasons = toolReasons(tools, [...state.messages, ...((state.pending?.messages ?? []) as { content: unknown }[])]);
      return c.json({ session: publicSession(row), ...state, tool_reasons }, 200);
    })
    .openapi(renameRoute, async (c) => {
      const row = await renameSession(c.var.db, c.var.user.id, c.req.valid("param").id, c.req.valid("json").title);
      return c.json({ session: publicSession(row) }, 200);
    })
    .openapi(deleteRoute, async (c) => {
      const session = await getSession(c.var.db, c.var.user.id, c.req.valid("param").id);
      await destroySessionObject(c.env, c.var.user.id, session.id);
      await deleteSessionRow(c.var.db, c.var.user.id, session.id);
      return c.json({ ok: true as const }, 200);
    })
    .openapi(toolResultRoute, async (c) => {
      const { db, user, requestId } = c.var;
      const session = await getSession(db, user.id, c.req.valid("param").id);
      const stub = sessionStub(c.env, user.id, session.id);
      const started = await stub.resume({
        turnId: requestId,
        userId: user.id,
        plan: user.plan,
        shard: user.shard,
        sessionId: session.id,
        answer: c.req.valid("json"),
      });
      return turnResponse(c, started);
    })
    .openapi(stopRoute, async (c) => {
      const session = await getSession(c.var.db, c.var.user.id, c.req.valid("param").id);
      const stopped = await sessionStub(c.env, c.var.user.id, session.id).stopTurns();
      return c.json({ ok: true as const, stopped }, 200);
    })
    .openapi(cancelRoute, async (c) => {
      const session = await getSession(c.var.db, c.var.user.id, c.req.valid("param").id);
      const outcome = await sessionStub(c.env, c.var.user.id, session.id).cancelPending();
      if ("error" in outcome) throw new AppError(outcome.error.code, outcome.error.message);
      return c.json({ ok: true as const, cancelled: outcome.cancelled }, 200);
    });
