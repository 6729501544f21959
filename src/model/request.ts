/**
 * The per-model parts of a Messages request (docs/models.md): thinking and effort as each current
 * model accepts them, and prompt-cache breakpoints. No sampling parameters and no prefill anywhere.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { type Effort, modelInfo, type ThinkingDisplay } from "../config/models";

export type ThinkingSettings = { effort?: Effort | undefined; display: ThinkingDisplay };

/**
 * Chat: adaptive thinking (valid on every current model) with the configured display, so the notes the
 * model writes between tool calls come back as text. Effort only when configured; the model's own
 * default otherwise.
 */
export function chatThinking(settings: ThinkingSettings): Pick<Anthropic.MessageCreateParams, "thinking" | "output_config"> {
  return {
    thinking: { type: "adaptive", display: settings.display },
    ...(settings.effort ? { output_config: { effort: settings.effort } } : {}),
  };
}

/**
 * Background calls (extraction, summaries, consolidation): structured output with the least thinking the
 * model allows, since thinking is billed as output and counts toward `max_tokens` even when it is not
 * shown. Off where it can be turned off (`disabled` at the model's default effort, which is high or
 * below); `between_tools` at low effort where that is the lowest setting (a request without tools then
 * gets no thinking at all); else adaptive at low effort, its text omitted.
 */
export function backgroundRequest(model: string, format: Anthropic.JSONOutputFormat): Pick<Anthropic.MessageCreateParams, "thinking" | "output_config"> {
  const info = modelInfo(model);
  if (info.thinking === "adaptive-or-disabled") return { thinking: { type: "disabled" }, output_config: { format } };
  if (info.thinking === "adaptive-or-between-tools") return { thinking: { type: "between_tools" }, output_config: { format, effort: "low" } };
  return { thinking: { type: "adaptive", display: "omitted" }, output_config: { format, effort: "low" } };
}

const CACHE = { type: "ephemeral" } as const;

type Marked = { cache_control?: Anthropic.CacheControlEphemeral | null };

/** A copy of the message whose last block that can carry a breakpoint carries one (thinking blocks cannot). */
function mark(message: Anthropic.MessageParam): Anthropic.MessageParam {
  const blocks: Anthropic.ContentBlockParam[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : [...message.content];
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i];
    if (!b || b.type === "thinking" || b.type === "redacted_thinking") continue;
    blocks[i] = { ...b, cache_control: CACHE } as Anthropic.ContentBlockParam & Marked;
    return { ...message, content: blocks } as Anthropic.MessageParam;
  }
  return message;
}

/**
 * The request's system and messages with at most four breakpoints: the end of the system prompt (it
 * covers the tools too), the end of the turn before last and of the last stored turn (the previous
 * request wrote them, so they are read back exactly), and the last block (so the next call of this
 * turn's tool loop reads it). `boundaries` are message indexes where earlier turns end.
 */
export function withCacheBreakpoints(
  system: string,
  messages: readonly Anthropic.MessageParam[],
  boundaries: readonly number[],
): { system: Anthropic.TextBlockParam[]; messages: Anthropic.MessageParam[] } {
  const marks = new Set([...boundaries.filter((i) => i >= 0 && i < messages.length).slice(-2), messages.length - 1]);
  return {
    system: [{ type: "text", text: system, cache_control: CACHE }],
    messages: messages.map((m, i) => (marks.has(i) ? mark(m) : m)),
  };
}
