import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ClientToolSpec, clientToolSet, McpServerSpec } from "../bridge/client-tools";
import { reservedToolNames } from "../bridge/toolset";
import { quotaExceeded, quotaOf } from "../config/limits";
import type { Registry } from "../core/capability";
import { type ChatEvent, collectTurn, parseNdjson, ToolPendingEnvelope, UsageSchema } from "../core/events";
import type { AppEnv } from "../http/context";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, Slug, security } from "../http/openapi";
import { AppError, describeFailure } from "../lib/errors";
import { cleanText } from "../lib/sanitize";
import { assertChatBudget } from "../usage/budget";
import { coalescingStream } from "./coalesce";
import type { Started } from "./session-do";
import { createSessionWithinBudget, deleteSessionRow, requireProject, sessionStub } from "./store";

export const ChatRequest = z
  .strictObject({
    message: z.string().trim().min(1, "message must not be empty").max(32_000),
    session_id: Slug.optional(),
    site_id: Slug.optional(),
    project_id: Slug.optional(),
    stream: z.boolean().default(true),
    client_tools: z.array(ClientToolSpec).max(128).default([]).describe("Tools only the client can run; calling one suspends the turn"),
    mcp_servers: z.array(McpServerSpec).max(16).default([]).describe("MCP servers on the user's machine; their tools reach the model as mcp__<server>__<tool>"),
    // Web search is attached to every turn; older clients still send their toggle, which must not break them.
    web_search: z
      .boolean()
      .optional()
      .describe("Ignored: web search is always available to the model. Accepted so clients that still send the old toggle keep working")
      .openapi({ deprecated: true }),
  })
  .openapi("ChatRequest");

/** A turn as JSON: the reply and its events, then either how it ended or the tool_pending envelope. */
export const ChatResponse = z
  .object({
    session_id: z.string(),
    reply: z.string(),
    stop_reason: z.string().optional(),
    usage: UsageSchema.optional(),
    tools_used: z.array(z.string()).optional(),
    events: z.array(z.looseObject({ type: z.string() })),
  })
  .extend(ToolPendingEnvelope.partial().shape)
  .openapi("ChatTurn");

const chatRoute = createRoute({
  method: "post",
  path: "/v1/chat",
  operationId: "chat",
  tags: ["chat"],
  summary: "One chat turn: an SSE stream by default, JSON with stream:false",
  security,
  request: jsonBody(ChatRequest),
  responses: {
    200: {
      description:
        "SSE events `session`, `text`, `thinking`, `tool_use`, `tool_result`, `memory_saved`, `citation`, `citations`, " +
        "`refusal`, `notice`, ... ending with `done`, `tool_pending` or `error`; or the turn as JSON",
      content: { "text/event-stream": { schema: z.string() }, "application/json": { schema: ChatResponse } },
    },
    ...errors,
    403: json(ErrorBody, "A new session would exceed the plan's session quota (quota_exceeded); nothing was written"),
    429: json(ErrorBody, "Today's chat token budget is used up, or too many requests for this key or user (rate_limited, with Retry-After)"),
    502: json(ErrorBody, "The model failed (JSON mode)"),
  },
});

const sseHeaders = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" };

/**
 * The turn's SSE bytes, as the session object wrote them; when the client goes away, `onCancel` stops
 * the turn. They are read as they arrive, and whatever the client has not taken yet leaves as one chunk.
 */
function relay(events: ReadableStream<Uint8Array>, onCancel: () => Promise<void>): ReadableStream<Uint8Array> {
  const reader = events.getReader();
  const out = coalescingStream(async () => {
    await onCancel();
    await reader.cancel();
  });
  (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return out.close();
      out.push(value);
    }
  })().catch((err: unknown) => out.error(err));
  return out.readable;
}

/** Answers a started turn as SSE or, with stream:false, as one JSON body (an error event becomes the error shape). */
export async function turnResponse(c: Context<AppEnv>, started: Started, cancel: () => Promise<void>): Promise<Response> {
  if ("error" in started) throw new AppError(started.error.code, started.error.message, undefined, started.error.retryAfter);
  if (started.stream) return new Response(relay(started.events, cancel), { headers: { ...sseHeaders, "x-request-id": c.var.requestId } });
  const collected: ChatEvent[] = [];
  for await (const event of started.events.pipeThrough(parseNdjson())) collected.push(event);
  const end = collected.at(-1);
  if (end?.type === "error") throw new AppError(end.code as ConstructorParameters<typeof AppError>[0], end.message);
  return c.json(collectTurn(collected), 200);
}

/** POST /v1/chat, with the server tools of the registry the sessions run with. */
export const chatRoutes = (registry: Registry) =>
  newRouter().openapi(chatRoute, async (c) => {
    const body = c.req.valid("json");
    const { db, user } = c.var;
    // Invisible and control characters never reach the model or the session title.
    const message = cleanText(body.message, 32_000, "message");
    // Client tools may not take a server tool's name: checked before anything is written.
    const declared = clientToolSet(body.client_tools, body.mcp_servers, reservedToolNames(registry.tools));
    if (declared.issues.length)
      throw new AppError(
        "invalid_request",
        declared.issues
          .slice(0, 5)
          .map((i) => `client_tools: ${i}`)
          .join("; "),
      );
    if (body.project_id) await requireProject(db, user.id, body.project_id);
    // An existing session is checked (it is the user's, today's budget is not spent) by the session
    // object in the same D1 batch as the turn's context; a new one is created only within budget.
    let sessionId = body.session_id;
    let created: { site_id: string | null; project_id: string | null } | undefined;
    if (!sessionId) {
      const input = { title: message, siteId: body.site_id ?? null, projectId: body.project_id ?? null };
      const quota = quotaOf(c.var.config.quotas, user.plan, "sessions");
      const row = await createSessionWithinBudget(db, user.id, input, c.var.config.dailyChatTokens || null, Date.now(), quota.limit);
      // Refused by the budget (read it once more for the 429's message and Retry-After), else by the session quota.
      if (!row) await assertChatBudget(db, user.id, c.var.config);
      if (!row) throw quotaExceeded(quota, " (start the chat in an existing session, or delete old ones)");
      sessionId = row.id;
      created = { site_id: row.siteId, project_id: row.projectId };
    }
    const stub = sessionStub(c.env, user.id, sessionId);
    const turnId = c.var.requestId;
    const turn = async () => {
      const started = await stub.turn({
        turnId,
        userId: user.id,
        plan: user.plan,
        shard: user.shard,
        sessionId,
        message,
        siteId: body.site_id ?? null,
        projectId: body.project_id ?? null,
        stream: body.stream,
        clientTools: declared.tools,
        ...(created ? { created } : {}),
      });
      return turnResponse(c, started, () => stub.cancelTurn(turnId));
    };
    if (!created) return turn();
    try {
      return await turn();
    } catch (err) {
      // The turn failed before the client learned the new session's id (an error response, not a stream): a
      // session it left empty would only linger in the list and count against the quota, and a retry makes another.
      await discardIfEmpty(c, user.id, sessionId);
      throw err;
    }
  });

/** Deletes a session this request created if the failed turn left nothing in it. Best effort: the turn's error is what the client gets. */
async function discardIfEmpty(c: Context<AppEnv>, userId: string, sessionId: string): Promise<void> {
  try {
    // Checked and deleted under the session's lock: a second request already using the new id keeps its turn.
    if (!(await sessionStub(c.env, userId, sessionId).destroyIfEmpty())) return;
    await deleteSessionRow(c.var.db, userId, sessionId);
  } catch (err) {
    console.error(JSON.stringify({ request_id: c.var.requestId, session: sessionId, discard: describeFailure(err) }));
  }
}
