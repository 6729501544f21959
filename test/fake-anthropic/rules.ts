/**
 * The request rules of the current models (docs/models.md), enforced the way the API does: a 400
 * `invalid_request_error` before any output. Model capabilities come from the same table the
 * product uses, so the fake and the code cannot disagree about a model.
 */
import { EFFORTS, type Effort, isKnownModel, MODELS } from "../../src/config/models";
import type { ApiRequest } from "./prefix";
import { searchResultError } from "./search-results";

export type Rejection = { status: number; type: string; message: string };

const bad = (message: string): Rejection => ({ status: 400, type: "invalid_request_error", message });

/** The thinking mode a valid request runs in. */
export type ThinkingMode = "adaptive" | "between_tools" | "disabled";

export function thinkingMode(req: ApiRequest): ThinkingMode {
  const t = req.thinking?.type;
  return t === "between_tools" || t === "disabled" ? t : "adaptive";
}

export function validate(req: ApiRequest): Rejection | null {
  if (!isKnownModel(req.model)) return { status: 404, type: "not_found_error", message: `model: ${req.model}` };
  const info = MODELS[req.model];
  if (typeof req.max_tokens !== "number" || req.max_tokens < 1) return bad("max_tokens: Field required");
  if (req.max_tokens > info.maxOutput)
    return bad(`max_tokens: ${req.max_tokens} > ${info.maxOutput}, which is the maximum allowed number of output tokens for ${req.model}`);
  for (const p of ["temperature", "top_p", "top_k"] as const) {
    if (req[p] !== undefined) return bad(`${p}: sampling parameters are not supported for this model`);
  }
  if (!Array.isArray(req.messages) || req.messages.length === 0) return bad("messages: at least one message is required");
  // The one trailing assistant message allowed: a paused server-tool turn sent back to continue it.
  const tail = req.messages.at(-1);
  const pausedTurn = tail?.role === "assistant" && typeof tail.content !== "string" && tail.content.some((b) => b.type === "server_tool_use");
  if (tail?.role !== "user" && !pausedTurn) {
    return bad("This model does not support assistant message prefill. The conversation must end with a user message.");
  }

  const effort = req.output_config?.effort ?? info.defaultEffort;
  if (!(EFFORTS as readonly string[]).includes(effort)) return bad(`output_config.effort: must be one of ${EFFORTS.join(", ")}`);
  const type = req.thinking?.type;
  if (type !== undefined && !["adaptive", "between_tools", "disabled", "enabled"].includes(type)) return bad(`thinking.type: unknown type "${type}"`);
  if (type === "enabled")
    return bad(
      '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
    );
  if (type === "disabled" && info.thinking === "adaptive-or-between-tools") {
    return bad('"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" to turn off up-front thinking.');
  }
  if (type === "disabled" && info.thinking === "adaptive-always") {
    return bad(
      '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
    );
  }
  if (type === "disabled" && (effort as Effort) !== "low" && effort !== "medium" && effort !== "high") {
    return bad(`thinking.type.disabled is not supported at effort "${effort}"`);
  }
  if (type === "between_tools") {
    if (info.thinking !== "adaptive-or-between-tools") return bad('"thinking.type.between_tools" is not supported for this model.');
    if (effort !== "low" && effort !== "medium" && effort !== "high")
      return bad(`thinking.type.between_tools is not supported at effort "${effort}"; use "thinking.type.adaptive"`);
  }
  const display = req.thinking?.display;
  if (display !== undefined && display !== "summarized" && display !== "omitted") return bad(`thinking.display: unknown value "${display}"`);

  const choice = req.tool_choice?.type;
  if (choice === "any" || choice === "tool") {
    if (info.forcedToolChoice === "never" || thinkingMode(req) !== "disabled") {
      return bad(
        `tool_choice.type "${choice}" is not supported ${info.forcedToolChoice === "never" ? "for this model" : "while thinking is on"}: use "auto" or "none", or structured outputs`,
      );
    }
  }

  const format = req.output_config?.format;
  if (format !== undefined) {
    const schema = format.schema;
    if (format.type !== "json_schema" || typeof schema !== "object" || schema === null || Array.isArray(schema)) {
      return bad('output_config.format: expected {"type": "json_schema", "schema": {...}}');
    }
  }

  const pairing = toolPairing(req);
  if (pairing) return bad(pairing);
  const results = searchResultError(req);
  if (results) return bad(results);

  let breakpoints = 0;
  const count = (b: unknown) => {
    if (b && typeof b === "object" && "cache_control" in b && (b as { cache_control?: unknown }).cache_control) breakpoints += 1;
  };
  (req.tools ?? []).forEach(count);
  if (Array.isArray(req.system)) req.system.forEach(count);
  for (const m of req.messages) if (Array.isArray(m.content)) m.content.forEach(count);
  if (breakpoints > 4) return bad(`A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`);
  return null;
}

/** Every tool_use must be answered by a tool_result in the very next (user) message, and vice versa. */
function toolPairing(req: ApiRequest): string | null {
  for (let i = 0; i < req.messages.length; i++) {
    const m = req.messages[i];
    if (m?.role !== "assistant" || typeof m.content === "string") continue;
    const ids = m.content.filter((b) => b.type === "tool_use").map((b) => String(b.id));
    if (!ids.length) continue;
    const next = req.messages[i + 1];
    const answered = new Set(
      next && typeof next.content !== "string" ? next.content.filter((b) => b.type === "tool_result").map((b) => String(b.tool_use_id)) : [],
    );
    const missing = ids.filter((id) => !answered.has(id));
    if (missing.length) {
      return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  for (let i = 0; i < req.messages.length; i++) {
    const m = req.messages[i];
    if (m?.role !== "user" || typeof m.content === "string") continue;
    const prev = req.messages[i - 1];
    const known = new Set(
      prev && prev.role === "assistant" && typeof prev.content !== "string" ? prev.content.filter((b) => b.type === "tool_use").map((b) => String(b.id)) : [],
    );
    const orphan = m.content.find((b) => b.type === "tool_result" && !known.has(String(b.tool_use_id)));
    if (orphan)
      return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(orphan.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
  }
  return null;
}
