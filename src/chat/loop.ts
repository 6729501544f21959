/**
 * The agentic loop: call the model, run the server tools it asks for, feed every tool_result back,
 * and let the model continue in the same stream, up to `maxIterations` model calls.
 * Invariant: an assistant message with tool_use blocks is persisted together with the user message
 * that carries all of its tool_results, so history never holds a dangling tool_use.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { ModelClient } from "../model/anthropic";
import { isAbort } from "../model/errors";
import { describeTool, runTool, toAnthropicTool, type Tool, type ToolContext } from "../tools/tool";
import { toolByName } from "../tools/registry";
import type { ChatEvent, Usage } from "./events";

export type MessageParam = Anthropic.MessageParam;

export type LoopInput = {
  client: ModelClient;
  model: string;
  maxTokens: number;
  maxIterations: number;
  system: string;
  messages: MessageParam[];
  tools: readonly Tool[];
  toolCtx: ToolContext;
  signal: AbortSignal;
  emit(event: ChatEvent): void;
  /** Appends messages to the session history atomically. */
  persist(messages: MessageParam[]): Promise<void>;
};

export type LoopOutcome = { stopReason: string; usage: Usage; toolsUsed: string[]; answered: boolean };

export async function runAgentLoop(input: LoopInput): Promise<LoopOutcome> {
  const { client, tools, toolCtx, emit, signal } = input;
  const messages = [...input.messages];
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  const toolsUsed: string[] = [];
  const toolDefs = tools.map(toAnthropicTool);
  let answered = false;

  for (let iteration = 0; iteration < input.maxIterations; iteration++) {
    let partial = "";
    let message: Anthropic.Message;
    try {
      const stream = client.messages.stream(
        {
          model: input.model,
          max_tokens: input.maxTokens,
          system: input.system,
          messages,
          ...(toolDefs.length ? { tools: toolDefs } : {}),
          metadata: { user_id: toolCtx.userId },
        },
        { signal },
      );
      for await (const event of stream) {
        if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
          partial += event.delta.text;
          emit({ type: "text", delta: event.delta.text });
        }
      }
      message = await stream.finalMessage();
    } catch (err) {
      if (isAbort(err) && partial) {
        await input.persist([{ role: "assistant", content: [{ type: "text", text: partial }] }]);
        answered = true;
      }
      throw Object.assign(err instanceof Error ? err : new Error(String(err)), { answered });
    }
    usage.input_tokens += message.usage.input_tokens;
    usage.output_tokens += message.usage.output_tokens;
    const assistant: MessageParam = { role: "assistant", content: message.content as Anthropic.ContentBlockParam[] };
    const calls = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");

    if (message.stop_reason !== "tool_use" || calls.length === 0) {
      await input.persist([assistant]);
      return { stopReason: message.stop_reason ?? "end_turn", usage, toolsUsed, answered: true };
    }

    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const call of calls) {
      const tool = toolByName(tools, call.name);
      toolsUsed.push(call.name);
      emit({ type: "tool_use", id: call.id, name: call.name, input: call.input, reason: tool ? describeTool(tool, call.input) : `Calling ${call.name}` });
      const result = tool ? await runTool(tool, toolCtx, call.input) : { content: `Unknown tool: ${call.name}`, isError: true };
      emit({ type: "tool_result", id: call.id, name: call.name, ok: !result.isError });
      results.push({ type: "tool_result", tool_use_id: call.id, content: result.content, ...(result.isError ? { is_error: true } : {}) });
    }
    const toolTurn: MessageParam = { role: "user", content: results };
    await input.persist([assistant, toolTurn]);
    answered = true;
    messages.push(assistant, toolTurn);
    if (signal.aborted) return { stopReason: "client_disconnected", usage, toolsUsed, answered };
  }
  return { stopReason: "max_iterations", usage, toolsUsed, answered };
}
