/**
 * Starting a chat turn and answering it, for both ways a client asks: engram's POST /v1/chat and the AI SDK's
 * POST /v1/chat/ui (routes-chat-ui.ts).
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ClientToolSpec, clientToolSet, McpServerSpec } from "../bridge/client-tools";
import { reservedToolNames } from "../bridge/toolset";
import { quotaExceeded, quotaOf } from "../config/limits";
import type { Registry } from "../core/capability";
import { type ChatEvent, collectTurn, parseNdjson } from "../core/events";
import { dbOf, shardBindings } from "../db/shards";
import type { AppEnv } from "../http/context";
import { Slug } from "../http/openapi";
import { AppError, describeFailure } from "../lib/errors";
import { cleanText } from "../lib/sanitize";
import { assertChatBudget } from "../usage/budget";
import { relay } from "./relay";
import type { Reading, Started } from "./session-do";
import { createSessionWithinBudget, deleteSessionRow, requireProject, sessionIdTaken, sessionStub } from "./store";
import { UI_STREAM_HEADERS } from "./ui-stream";

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

export const sseHeaders = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" };

/** Answers a started turn as SSE or, with stream:false, as one JSON body (an error event becomes the error shape). */
export async function turnResponse(c: Context<AppEnv>, started: Started, headers: Record<string, string> = {}): Promise<Response> {
  if ("error" in started) throw new AppError(started.error.code, started.error.message, undefined, started.error.retryAfter);
  if (started.stream) return new Response(relay(started.events), { headers: { ...sseHeaders, ...headers, "x-request-id": c.var.requestId } });
  const collected: ChatEvent[] = [];
  for await (const event of started.events.pipeThrough(parseNdjson())) collected.push(event);
  const end = collected.at(-1);
  if (end?.type === "error") throw new AppError(end.code as ConstructorParameters<typeof AppError>[0], end.message);
  return c.json(collectTurn(collected), 200);
}

/** What a chat turn is asked with: POST /v1/chat's body, from it or from the AI SDK's (routes-chat-ui.ts). */
export type ChatInput = z.infer<typeof ChatRequest>;

/**
 * Starts one chat turn and answers it. `opening`: the id a new session takes when `session_id` names none of the
 * user's (the AI SDK's chat id); `reading`: how the response reads the turn (session-do.ts).
 */
export async function startChat(c: Context<AppEnv>, registry: Registry, body: ChatInput, reading: Reading = {}, opening?: string): Promise<Response> {
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
    // Another user's session may hold a chosen id on another shard, where this shard's key cannot see it; two
    // users choosing one new id at once on two shards each get their own chat (objects and rows are per user).
    const taken = () => new AppError("conflict", "that chat id is taken: start the chat with a new id");
    if (opening && (await sessionIdTaken(shardBindings(c.env).map(dbOf), opening))) throw taken();
    const input = { id: opening, title: message, siteId: body.site_id ?? null, projectId: body.project_id ?? null };
    const quota = quotaOf(c.var.config.quotas, user.plan, "sessions");
    const row = await createSessionWithinBudget(db, user.id, input, c.var.config.dailyChatTokens || null, Date.now(), quota.limit);
    if (!row && opening && (await sessionIdTaken([db], opening))) throw taken();
    // Refused by the budget (read it once more for the 429's message and Retry-After), else by the session quota.
    if (!row) await assertChatBudget(db, user.id, c.var.config);
    if (!row) throw quotaExceeded(quota, " (start the chat in an existing session, or delete old ones)");
    sessionId = row.id;
    created = { site_id: row.siteId, project_id: row.projectId };
  }
  const stub = sessionStub(c.env, user.id, sessionId);
  const turnId = c.var.requestId;
  const turn = async () => {
    const started = await stub.turn(
      {
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
      },
      reading,
    );
    return turnResponse(c, started, reading.ui ? UI_STREAM_HEADERS : {});
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
}

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
