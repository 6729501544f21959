/**
 * The agentic loop: call the model, run the server tools it asks for, feed every tool_result back,
 * and let the model continue in the same stream, up to `maxIterations` model calls per turn.
 * When a call can only be answered by the client (a client tool, or an approval), the loop stops and
 * returns the suspended state; a resumed turn enters the loop again with its `progress`.
 * Invariants (docs/models.md):
 * - an assistant message with tool_use blocks is persisted together with the user message that
 *   carries all of its tool_results, so history never holds a dangling tool_use; a reply cut by
 *   max_tokens loses its (incomplete) tool calls before it is stored;
 * - assistant content is stored exactly as the API returned it (thinking blocks and signatures
 *   included), and a paused server-tool turn is continued in the same assistant message;
 * - a refused reply is never stored: the outcome says so and the caller takes the turn back out;
 * - a turn that ends with no text to show (only thinking, or empty) says so with an `empty` notice.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { nonEmpty, type PendingCalls } from "../bridge/continuation";
import { dispatchCalls, modelTools, type TurnTools } from "../bridge/toolset";
import { serverToolEvents } from "../bridge/web-search";
import { addUsage, type ChatEvent, type Usage, zeroUsage } from "../core/events";
import { citedEvidence, type EvidenceBlock } from "../core/evidence";
import type { ToolContext } from "../core/tool";
import { approxTokens } from "../lib/text";
import type { ModelClient } from "../model/anthropic";
import { isAbort, ModelCutOff } from "../model/errors";
import { chatThinking, type ThinkingSettings, withCacheBreakpoints } from "../model/request";
import { TurnError } from "./turn-error";

export type MessageParam = Anthropic.MessageParam;

/** How far a turn has come, across suspensions. */
export type Progress = { iterations: number; usage: Usage; toolsUsed: string[] };

export type LoopInput = {
  client: ModelClient;
  model: string;
  maxTokens: number;
  maxIterations: number;
  system: string;
  messages: MessageParam[];
  /** The turn's evidence, already in `messages`: what a citation may name (the `citations` event). */
  evidence?: readonly EvidenceBlock[];
  /** Indexes in `messages` where earlier turns end (cache breakpoints); see sessions/history.ts. */
  turnEnds?: readonly number[];
  /** Thinking display and effort; default: summarized display, the model's own effort. */
  thinking?: ThinkingSettings;
  tools: TurnTools;
  /** Tools the session approved once and for all: they never pause for approval. */
  alwaysAllow: ReadonlySet<string>;
  toolCtx: ToolContext;
  signal: AbortSignal;
  emit(event: ChatEvent): void;
  /** Appends messages to the session history atomically. */
  persist(messages: MessageParam[]): Promise<void>;
  /** Called with each model call's usage as it completes, so a turn that fails later still accounts for it. */
  onUsage?(usage: Anthropic.Usage): void;
  /**
   * Before each model call, with its input (estimated): the output limit the call may use, at most `maxTokens`
   * (the turn's budget reservation, usage/reservation.ts). Throws when there is no room for the call.
   */
  reserve?(inputTokens: number): Promise<number>;
  progress?: Progress;
};

export type Suspension = { messages: MessageParam[]; results: Anthropic.ToolResultBlockParam[]; pending: PendingCalls };

export type LoopOutcome = Progress & { answered: boolean } & (
    | { kind: "done"; stopReason: string }
    | { kind: "refused" }
    | ({ kind: "suspended" } & Suspension)
  );

export const freshProgress = (): Progress => ({ iterations: 0, usage: zeroUsage(), toolsUsed: [] });

const TRUNCATED = new Set(["max_tokens", "model_context_window_exceeded"]);
/** The stop reasons of a reply the output limit (or the context window) cut short. */
export const cutShort = (stopReason: string) => TRUNCATED.has(stopReason);

/** Runs the loop to its outcome; a failure is thrown as a TurnError saying what history already holds of the turn. */
export async function runAgentLoop(input: LoopInput): Promise<LoopOutcome> {
  const { tools, toolCtx, emit, signal } = input;
  const messages = [...input.messages];
  const start = input.progress ?? freshProgress();
  const progress: Progress = { iterations: start.iterations, usage: { ...zeroUsage(), ...start.usage }, toolsUsed: [...start.toolsUsed] };
  const toolDefs = modelTools(tools);
  let answered = false;

  while (progress.iterations < input.maxIterations) {
    progress.iterations += 1;
    let message: Anthropic.Message;
    try {
      const maxTokens = input.reserve ? await input.reserve(approxTokens(JSON.stringify([input.system, messages, toolDefs]))) : input.maxTokens;
      message = await streamMessage(input, messages, toolDefs, progress, maxTokens);
    } catch (err) {
      const failed = TurnError.of(err);
      // A stopped reply keeps what it had said; any other failure keeps nothing of this call.
      if (isAbort(failed.cause) && failed.partial) {
        await input.persist([{ role: "assistant", content: [{ type: "text", text: failed.partial }] }]);
        answered = true;
      }
      throw new TurnError(failed.cause, answered, failed.partial);
    }
    input.onUsage?.(message.usage);
    progress.usage = addUsage(progress.usage, message.usage);

    if (message.stop_reason === "refusal") {
      const details = message.stop_details;
      emit({ type: "refusal", category: details?.category ?? null, explanation: details?.explanation ?? null });
      return { kind: "refused", ...progress, answered };
    }
    // After a pause the reply continues the paused assistant message: keep it one message.
    const paused = messages.at(-1)?.role === "assistant" ? messages.pop() : undefined;
    let content = message.content as Anthropic.ContentBlockParam[];
    if (message.stop_reason && cutShort(message.stop_reason)) {
      // A tool call cut mid-input is unusable and must never be stored unanswered: drop it, say why.
      const calls = content.filter((b) => b.type === "tool_use").length;
      content = content.filter((b) => b.type !== "tool_use");
      emit({
        type: "notice",
        code: "truncated",
        message: calls ? "the reply hit the output limit while calling a tool; the call was dropped" : "the reply hit the output limit and is cut short",
      });
    }
    const stored: MessageParam = { role: "assistant", content };
    const assistant: MessageParam = paused ? { role: "assistant", content: [...(paused.content as Anthropic.ContentBlockParam[]), ...content] } : stored;

    if (message.stop_reason === "pause_turn") {
      // A long server-tool turn (web search) paused: send it back as-is and the model carries on.
      await input.persist([stored]);
      answered = true;
      messages.push(assistant);
      continue;
    }
    const calls = content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    if (message.stop_reason !== "tool_use" || calls.length === 0) {
      if (message.stop_reason === "end_turn" && !content.some((b) => b.type === "text" && b.text.trim())) {
        // The model may end a turn with nothing to show: all of it in thinking, or an empty reply after tool results.
        emit({ type: "notice", code: "empty", message: "the model ended its turn without an answer; ask again or rephrase" });
      }
      if (content.some((b) => b.type !== "thinking" && b.type !== "redacted_thinking")) await input.persist([stored]);
      return { kind: "done", stopReason: message.stop_reason ?? "end_turn", ...progress, answered: true };
    }

    progress.toolsUsed.push(...calls.map((c) => c.name));
    const { results, pending } = await dispatchCalls(calls, tools, input.alwaysAllow, toolCtx, emit);
    // The continuation stores the new half only: the paused half is already in history.
    if (nonEmpty(pending)) return { kind: "suspended", messages: [stored], results, pending, ...progress, answered: true };

    const toolTurn: MessageParam = { role: "user", content: results };
    await input.persist([stored, toolTurn]);
    answered = true;
    messages.push(assistant, toolTurn);
    if (signal.aborted) return { kind: "done", stopReason: "client_disconnected", ...progress, answered };
  }
  return { kind: "done", stopReason: "max_iterations", ...progress, answered };
}

/** One streamed model call; text, thinking, web searches and citations reach the client as they arrive. */
async function streamMessage(
  input: LoopInput,
  messages: MessageParam[],
  toolDefs: Anthropic.ToolUnion[],
  progress: Progress,
  maxTokens: number,
): Promise<Anthropic.Message> {
  let partial = "";
  const cached = withCacheBreakpoints(input.system, messages, input.turnEnds ?? []);
  try {
    const stream = input.client.messages.stream(
      {
        model: input.model,
        max_tokens: maxTokens,
        system: cached.system,
        messages: cached.messages,
        tools: toolDefs,
        ...chatThinking(input.thinking ?? { display: "summarized" }),
        metadata: { user_id: input.toolCtx.userId },
      },
      { signal: input.signal },
    );
    let ended = false;
    for await (const event of stream) {
      if (event.type === "message_stop") ended = true;
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
        partial += event.delta.text;
        input.emit({ type: "text", delta: event.delta.text });
      }
      if (event.type === "content_block_delta" && event.delta.type === "thinking_delta" && event.delta.thinking) {
        input.emit({ type: "thinking", delta: event.delta.thinking });
      }
      for (const e of serverToolEvents(event, stream.currentMessage)) {
        if (e.type === "tool_use") progress.toolsUsed.push(e.name);
        input.emit(e);
      }
      // A text block's citations arrive after its text; once it stops, the documents it cites are known.
      const done = event.type === "content_block_stop" ? stream.currentMessage?.content[event.index] : undefined;
      if (done?.type === "text" && input.evidence?.length) {
        const cited = citedEvidence(done.citations, input.evidence);
        if (cited.length) input.emit({ type: "citations", cited });
      }
    }
    // A connection that closed mid-reply leaves the SDK a partial message with no stop reason: never taken as an answer.
    if (!ended) throw new ModelCutOff();
    return await stream.finalMessage();
  } catch (err) {
    throw new TurnError(err, false, partial);
  }
}
