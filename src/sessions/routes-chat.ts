import { createRoute, z } from "@hono/zod-openapi";
import type { Registry } from "../core/capability";
import { ToolPendingEnvelope, UsageSchema } from "../core/events";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, security, userMoving } from "../http/openapi";
import { ChatRequest, startChat } from "./chat-start";
import { uiChatRoutes } from "./routes-chat-ui";

export { turnResponse } from "./chat-start";

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

/** What starting or continuing a turn can answer besides the shared errors (a stream reports later faults as `error` events). */
export const turnErrors = {
  409: json(ErrorBody, "The session is answering another turn (session_busy), or waits for a tool result (tool_pending)"),
  413: json(ErrorBody, "The body is larger than MAX_BODY_BYTES (payload_too_large)"),
  429: json(ErrorBody, "Today's chat token budget is used up, or too many requests for this key or user (rate_limited, with Retry-After)"),
  502: json(ErrorBody, "The model failed (model_error; JSON mode)"),
  503: {
    ...json(ErrorBody, "The model is overloaded (model_overloaded; JSON mode), or your account is being moved (user_moving): try again shortly"),
    headers: userMoving.headers,
  },
} as const;

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
    ...turnErrors,
    403: json(ErrorBody, "A new session would exceed the plan's session quota (quota_exceeded); nothing was written"),
  },
});

/** POST /v1/chat, with the server tools of the registry the sessions run with. */
export const chatRoutes = (registry: Registry) =>
  newRouter()
    .openapi(chatRoute, async (c) => startChat(c, registry, c.req.valid("json")))
    .route("/", uiChatRoutes(registry));
