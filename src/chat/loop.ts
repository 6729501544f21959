/**
 * The agentic loop: call the model, run the server tools it asks for, feed every tool_result back,
 * and let the model continue in the same stream, up to `maxIterations` model calls per turn.
 * When a call can only be answered by the client (a client tool, or an approval), the loop stops and
 * returns the suspended state; a resumed turn enters the loop again with its `progress`.
 * Invariant: an assistant message with tool_use blocks is persisted together with the user message
 * that carries all of its tool_results, so history never holds a dangling tool_use. A suspended
 * assistant message is not persisted here: it travels in the continuation until every call is answered.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { nonEmpty, type PendingCalls } from "../bridge/continuation";
import { dispatchCalls, modelTools, type TurnTools } from "../bridge/toolset";
import { serverToolEvents } from "../bridge/web-search";
import type { ModelClient } from "../model/anthropic";
import { isAbort } from "../model/errors";
import type { ToolContext } from "../core/tool";
import type { ChatEvent, Usage } from "../core/events";

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
  progress?: Progress;
};

export type Suspension = { messages: MessageParam[]; results: Anthropic.ToolResultBlockParam[]; pending: PendingCalls };

export type LoopOutcome = Progress & { answered: boolean } & ({ kind: "done"; stopReason: string } | ({ kind: "suspended" } & Suspension));

export const freshProgress = (): Progress => ({ iterations: 0, usage: { input_tokens: 0, output_tokens: 0 }, toolsUsed: [] });

export async function runAgentLoop(input: LoopInput): Promise<LoopOutcome> {
  const { tools, toolCtx, emit, signal } = input;
  const messages = [...input.messages];
  const start = input.progress ?? freshProgress();
  const progress: Progress = { iterations: start.iterations, usage: { ...start.usage }, toolsUsed: [...start.toolsUsed] };
  const toolDefs = modelTools(tools);
  let answered = false;

  while (progress.iterations < input.maxIterations) {
    progress.iterations += 1;
    let message: Anthropic.Message;
    try {
      message = await streamMessage(input, messages, toolDefs, progress);
    } catch (err) {
      const partial = (err as { partial?: string }).partial;
      if (isAbort(err) && partial) {
        await input.persist([{ role: "assistant", content: [{ type: "text", text: partial }] }]);
        answered = true;
      }
      throw Object.assign(err instanceof Error ? err : new Error(String(err)), { answered });
    }
    input.onUsage?.(message.usage);
    progress.usage.input_tokens += message.usage.input_tokens;
    progress.usage.output_tokens += message.usage.output_tokens;
    const assistant: MessageParam = { role: "assistant", content: message.content as Anthropic.ContentBlockParam[] };

    if (message.stop_reason === "pause_turn") {
      // A long server-tool turn (web search) paused: send it back as-is and the model carries on.
      await input.persist([assistant]);
      answered = true;
      messages.push(assistant);
      continue;
    }
    const calls = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    if (message.stop_reason !== "tool_use" || calls.length === 0) {
      await input.persist([assistant]);
      return { kind: "done", stopReason: message.stop_reason ?? "end_turn", ...progress, answered: true };
    }

    progress.toolsUsed.push(...calls.map((c) => c.name));
    const { results, pending } = await dispatchCalls(calls, tools, input.alwaysAllow, toolCtx, emit);
    if (nonEmpty(pending)) return { kind: "suspended", messages: [assistant], results, pending, ...progress, answered: true };

    const toolTurn: MessageParam = { role: "user", content: results };
    await input.persist([assistant, toolTurn]);
    answered = true;
    messages.push(assistant, toolTurn);
    if (signal.aborted) return { kind: "done", stopReason: "client_disconnected", ...progress, answered };
  }
  return { kind: "done", stopReason: "max_iterations", ...progress, answered };
}

/** One streamed model call; text, web searches and citations reach the client as they arrive. */
async function streamMessage(input: LoopInput, messages: MessageParam[], toolDefs: Anthropic.ToolUnion[], progress: Progress): Promise<Anthropic.Message> {
  let partial = "";
  try {
    const stream = input.client.messages.stream(
      {
        model: input.model,
        max_tokens: input.maxTokens,
        system: input.system,
        messages,
        tools: toolDefs,
        metadata: { user_id: input.toolCtx.userId },
      },
      { signal: input.signal },
    );
    for await (const event of stream) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
        partial += event.delta.text;
        input.emit({ type: "text", delta: event.delta.text });
      }
      for (const e of serverToolEvents(event, stream.currentMessage)) {
        if (e.type === "tool_use") progress.toolsUsed.push(e.name);
        input.emit(e);
      }
    }
    return await stream.finalMessage();
  } catch (err) {
    throw Object.assign(err instanceof Error ? err : new Error(String(err)), { partial });
  }
}
