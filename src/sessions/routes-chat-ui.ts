/**
 * The AI SDK's chat protocol (`useChat` + `DefaultChatTransport`, `ai` 5-7): POST /v1/chat/ui runs a turn, and
 * GET /v1/chat/ui/{id}/stream is where the transport reconnects. The chat id is the session id; engram keeps the
 * history, so only the last message counts (a user message starts a turn; an assistant message carries the client's
 * tool outputs and approval answers for the suspended turn). The response is the UI message stream (ui-stream.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type Answer, ToolResultRequest } from "../bridge/answer";
import type { Registry } from "../core/capability";
import type { AppEnv } from "../http/context";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, Slug, security } from "../http/openapi";
import { AppError } from "../lib/errors";
import { issueText } from "../lib/issues";
import { ChatRequest, sseHeaders, startChat, turnResponse } from "./chat-start";
import { prepended } from "./coalesce";
import { relay } from "./relay";
import type { Started } from "./session-do";
import { getSession, sessionStub } from "./store";
import { UI_STREAM_HEADERS, type UiAnswer } from "./ui-stream";

const UiPart = z.looseObject({ type: z.string().max(200) });
const UiMessage = z.looseObject({ id: z.string().max(200), role: z.enum(["system", "user", "assistant"]), parts: z.array(UiPart).max(1_000) });
type UiMessage = z.infer<typeof UiMessage>;

export const UiChatRequest = z
  .strictObject({
    id: Slug.describe("The chat id: an engram session id, or a new id the session is created with"),
    message: UiMessage.optional().describe("The new message alone (what `prepareSendMessagesRequest` sends; see docs/api.md)"),
    messages: z.array(UiMessage).max(10_000).optional().describe("The AI SDK's default body: the whole chat, of which only the last message is read"),
    trigger: z.enum(["submit-message", "regenerate-message"]).optional(),
    messageId: z.string().max(200).optional(),
    metadata: z.unknown().optional(),
    ...ChatRequest.pick({ site_id: true, project_id: true, client_tools: true, mcp_servers: true }).shape,
  })
  .openapi("UiChatRequest");

const uiStream = { "text/event-stream": { schema: z.string().describe("The AI SDK's UI message stream (SSE `data:` lines of JSON chunks)") } };

const postRoute = createRoute({
  method: "post",
  path: "/v1/chat/ui",
  operationId: "chatUi",
  tags: ["chat"],
  summary: "One chat turn in the Vercel AI SDK's UI message stream protocol (for useChat)",
  description:
    "The chat id is the session id (a new id creates the session). Only the last message is read: a user message starts a " +
    "turn; an assistant message answers the suspended turn's calls (client tool outputs, approval responses).",
  security,
  request: jsonBody(UiChatRequest),
  responses: {
    200: { description: "The turn as a UI message stream", content: uiStream },
    ...errors,
    403: json(ErrorBody, "A new session would exceed the plan's session quota (quota_exceeded); nothing was written"),
    409: json(ErrorBody, "A tool call is pending (tool_pending), nothing of the last message answers one, or the chat id is another session's"),
    410: json(ErrorBody, "The pending call expired (continuation_expired)"),
  },
});

const reconnectRoute = createRoute({
  method: "get",
  path: "/v1/chat/ui/{id}/stream",
  operationId: "chatUiReconnect",
  tags: ["chat"],
  summary: "Reconnect to a chat's latest turn: replayed from its start, live while it runs (DefaultChatTransport's reconnectToStream)",
  security,
  request: { params: z.object({ id: Slug }) },
  responses: {
    200: { description: "The latest turn as a UI message stream, from its start", content: uiStream },
    204: { description: "No turn of this chat is held (none ran since the session object started)" },
    ...errors,
  },
});

export const uiChatRoutes = (registry: Registry) =>
  newRouter()
    .openapi(postRoute, async (c) => {
      const body = c.req.valid("json");
      if (body.trigger === "regenerate-message")
        throw new AppError("invalid_request", "regenerate is not supported: engram keeps the history; send the message again instead");
      const last = body.message ?? body.messages?.at(-1);
      if (!last) throw new AppError("invalid_request", "send the new message as `message` (or `messages`, the last one is read)");
      if (last.role === "assistant") return answerCalls(c, body.id, last);
      const text = textOf(last);
      if (last.role !== "user" || !text)
        throw new AppError("invalid_request", "the last message must be the user's, with text (or an assistant message answering tool calls)");
      const exists = await getSession(c.var.db, c.var.user.id, body.id).then(
        () => true,
        () => false,
      );
      const chat = ChatRequest.parse({
        message: text,
        ...(exists ? { session_id: body.id } : {}),
        ...pick(body, ["site_id", "project_id", "client_tools", "mcp_servers"]),
      });
      return startChat(c, registry, chat, { ui: { messageId: `msg_${c.var.requestId}`, answers: {} } }, exists ? undefined : body.id);
    })
    .openapi(reconnectRoute, async (c) => {
      const { id } = c.req.valid("param");
      const session = await getSession(c.var.db, c.var.user.id, id);
      const held = await sessionStub(c.env, c.var.user.id, session.id).reattach({ format: "ui" });
      if ("error" in held) throw new AppError(held.error.code, held.error.message);
      if ("none" in held) return c.body(null, 204);
      return new Response(relay(held.events), { headers: { ...sseHeaders, ...UI_STREAM_HEADERS, "x-request-id": c.var.requestId } });
    });

/** A user message's text: its text parts, a blank line between them (files and other parts are not read). */
function textOf(message: UiMessage): string {
  return message.parts
    .flatMap((p) => (p.type === "text" && typeof p.text === "string" ? [p.text] : []))
    .join("\n\n")
    .trim();
}

function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) as Partial<Pick<T, K>>;
}

/**
 * The assistant message's answers to the suspended turn, each as POST /v1/sessions/{id}/tool_result would take it.
 * The turn goes on once per answer; every answer but the last only records (the turn waits for the rest), so the
 * client reads one stream: the earlier answers' events, then the turn's continuation.
 */
async function answerCalls(c: Context<AppEnv>, chatId: string, message: UiMessage): Promise<Response> {
  const { db, user, requestId } = c.var;
  const session = await getSession(db, user.id, chatId);
  const stub = sessionStub(c.env, user.id, session.id);
  const pending = new Set(await stub.pendingCallIds());
  const answers = message.parts.flatMap((p) => {
    const a = typeof p.toolCallId === "string" && pending.has(p.toolCallId) ? answerOf(p) : null;
    return a ? [a] : [];
  });
  if (!answers.length) throw new AppError("conflict", "the message answers no pending tool call of this session");
  const view = { messageId: message.id, answers: Object.fromEntries(answers.flatMap(({ answer, shown }) => (shown ? [[answer.call_id, shown]] : []))) };
  const head: Uint8Array[] = [];
  let started: Started = { error: { code: "internal", message: "internal error" } };
  for (const [i, { answer }] of answers.entries()) {
    started = await stub.resume(
      { turnId: answers.length > 1 ? `${requestId}.${i}` : requestId, userId: user.id, plan: user.plan, shard: user.shard, sessionId: session.id, answer },
      { ui: view },
    );
    if ("error" in started || i === answers.length - 1) break;
    for await (const chunk of started.events) head.push(chunk);
  }
  return turnResponse(c, "error" in started ? started : { ...started, events: prepended(head, started.events) }, UI_STREAM_HEADERS);
}

/** One tool part's answer (null: the part answers nothing yet), and how the UI stream shows its outcome. */
function answerOf(part: z.infer<typeof UiPart>): { answer: Answer; shown?: UiAnswer } | null {
  const name = part.type === "dynamic-tool" ? String(part.toolName ?? "") : part.type.replace(/^tool-/, "");
  const approval = (part.approval ?? {}) as { approved?: unknown };
  const callId = String(part.toolCallId);
  let raw: Record<string, unknown>;
  let shown: UiAnswer | undefined;
  if (part.state === "output-available") {
    raw = { call_id: callId, content: typeof part.output === "string" ? part.output : JSON.stringify(part.output ?? null) };
    shown = { output: part.output };
  } else if (part.state === "output-error") {
    const errorText = typeof part.errorText === "string" && part.errorText ? part.errorText : "the tool failed";
    raw = { call_id: callId, content: errorText, is_error: true };
    shown = { errorText };
  } else if (part.state === "output-denied" || (part.state === "approval-responded" && approval.approved !== true)) {
    raw = { call_id: callId, action: "deny" };
    shown = { denied: true };
  } else if (part.state === "approval-responded") {
    raw = { call_id: callId, action: "allow", tool_name: name };
  } else return null;
  const parsed = ToolResultRequest.safeParse(raw);
  if (!parsed.success) throw new AppError("invalid_request", `tool call ${callId}: ${parsed.error.issues.map((i) => issueText(i, "answer")).join("; ")}`);
  return { answer: parsed.data, ...(shown ? { shown } : {}) };
}
