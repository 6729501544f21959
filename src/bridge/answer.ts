/**
 * The client's answer to a pending call (POST /v1/sessions/{id}/tool_result) and its guards. A client
 * tool's result is used as-is and never re-executed here; approving needs the tool's name; deny feeds
 * the model an is_error result; always also remembers the tool for the session. Every refusal leaves the continuation untouched.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "@hono/zod-openapi";
import { toolByName } from "../core/capability";
import type { ChatEvent, PendingCall } from "../core/events";
import { approvalNeeded, asksEveryCall, type ToolContext } from "../core/tool";
import type { ErrorCode } from "../lib/errors";
import type { Continuation } from "./continuation";
import { resultBlock, runServerTool, type TurnTools } from "./toolset";

export const MAX_RESULT_CHARS = 200_000;
/** The Messages API refuses an image whose base64 data is longer than 5 MiB: refused here first, while the call is still pending. */
export const MAX_IMAGE_BASE64_CHARS = 5 * 1024 * 1024;

const ImageData = z
  .base64({ error: "an image's data must be base64 (no whitespace, padded to a multiple of 4 characters)" })
  .min(1, "an image's data is empty")
  .max(MAX_IMAGE_BASE64_CHARS, `an image's base64 data is at most ${MAX_IMAGE_BASE64_CHARS} characters (the Messages API's limit)`);

const TextPart = z.strictObject({ type: z.literal("text"), text: z.string().max(MAX_RESULT_CHARS) });
const ImagePart = z.strictObject({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("base64"), media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]), data: ImageData }),
    z.strictObject({ type: z.literal("url"), url: z.url() }),
  ]),
});
const ResultContent = z.union([
  z.string().max(MAX_RESULT_CHARS),
  z
    .array(z.union([TextPart, ImagePart]))
    .min(1)
    .max(100),
]);

export const ToolResultRequest = z
  .strictObject({
    call_id: z.string({ error: "call_id is required" }).trim().min(1, "call_id is required").max(200),
    content: ResultContent.optional().describe("The client tool's output, passed to the model as-is"),
    is_error: z.boolean().optional().describe("The client tool failed; content says why"),
    action: z.enum(["allow", "deny", "always"]).optional().describe("An approval decision; always = allow for the rest of the session"),
    tool_name: z.string().trim().min(1).max(64).optional().describe("Required with allow and always"),
    stream: z.boolean().optional().describe("SSE or JSON; defaults to the mode of the suspended turn"),
  })
  .superRefine((b, ctx) => {
    if (b.content === undefined && b.action === undefined) {
      ctx.addIssue({ code: "custom", message: "give content (the tool's result) or action (allow, deny or always)" });
    }
    if ((b.action === "allow" || b.action === "always") && b.tool_name === undefined) {
      ctx.addIssue({ code: "custom", path: ["tool_name"], message: `tool_name is required with action ${b.action}` });
    }
    if (b.action === "deny" && b.content !== undefined) ctx.addIssue({ code: "custom", path: ["content"], message: "deny takes no content" });
  })
  .openapi("ToolResultRequest");
export type Answer = z.infer<typeof ToolResultRequest>;

export type Resolution = { call: PendingCall; remember: boolean } & (
  | { kind: "content"; content: Anthropic.ToolResultBlockParam["content"]; isError: boolean }
  | { kind: "deny" }
  | { kind: "run" }
);
export type Refusal = { code: ErrorCode; message: string };

export const DENIED = "The user denied this tool call.";

/** Checks the answer against the pending calls; decides nothing it cannot carry out. */
export function resolveAnswer(cont: Continuation, answer: Answer): Resolution | Refusal {
  const call = cont.pending.find((p) => p.call_id === answer.call_id);
  if (!call) return { code: "conflict", message: `call_id ${answer.call_id} is not pending; pending: ${cont.pending.map((p) => p.call_id).join(", ")}` };
  if (answer.tool_name !== undefined && answer.tool_name !== call.tool_name) {
    return { code: "conflict", message: `tool_name ${answer.tool_name} does not match the pending call's tool (${call.tool_name})` };
  }
  const remember = answer.action === "always";
  if (answer.action === "deny") return { kind: "deny", call, remember };
  if (call.runs === "client") {
    if (answer.content === undefined) {
      return { code: "invalid_request", message: `${call.tool_name} runs on the client: run it and post its output as content` };
    }
    return { kind: "content", call, remember, content: answer.content, isError: answer.is_error === true };
  }
  if (answer.content !== undefined) {
    return { code: "invalid_request", message: `${call.tool_name} runs on the server: answer with action allow, deny or always, not content` };
  }
  return { kind: "run", call, remember };
}

export const isRefusal = (r: Resolution | Refusal): r is Refusal => "code" in r;

/**
 * Carries out a resolution: the answered call's tool_result, plus, after `always`, the other pending
 * calls of the same tool (server ones run now; client ones no longer need approval).
 */
export async function applyAnswer(
  cont: Continuation,
  r: Resolution,
  tools: TurnTools,
  ctx: ToolContext,
  emit: (e: ChatEvent) => void,
): Promise<{ results: Anthropic.ToolResultBlockParam[]; pending: PendingCall[] }> {
  const results = [...cont.results];
  const settle = (call: PendingCall, block: Anthropic.ToolResultBlockParam) => {
    results.push(block);
    emit({ type: "tool_result", id: call.call_id, name: call.tool_name, ok: block.is_error !== true });
  };
  // Only the answered call is the user's approval of that call; the others an `always` covers run without one.
  const runHere = async (call: PendingCall, approved = false) =>
    settle(call, resultBlock(call.call_id, await runServerTool(tools, call.tool_name, ctx, call.tool_input, approved)));

  if (r.kind === "deny") settle(r.call, resultBlock(r.call.call_id, { content: DENIED, isError: true }));
  else if (r.kind === "run") await runHere(r.call, true);
  else settle(r.call, { type: "tool_result", tool_use_id: r.call.call_id, content: r.content, ...(r.isError ? { is_error: true } : {}) });

  const pending: PendingCall[] = [];
  for (const p of cont.pending) {
    if (p.call_id === r.call.call_id) continue;
    const tool = toolByName(tools.server, p.tool_name);
    // A memory write the user set to `ask` waits for its own answer, as a tool that asks every call does.
    const covered =
      r.remember &&
      p.tool_name === r.call.tool_name &&
      !asksEveryCall(tool) &&
      !(tool && p.runs === "server" && (await approvalNeeded(tool, ctx, p.tool_input)) === "every call");
    if (covered && p.runs === "server") await runHere(p);
    else pending.push(covered ? { ...p, needs_approval: false } : p);
  }
  return { results, pending };
}
