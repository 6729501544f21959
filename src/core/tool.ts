import { z } from "zod";
import { describeFailure } from "../lib/errors";
import { issueText } from "../lib/issues";
import { cleanMemoryTextOrEmpty } from "../lib/sanitize";
import type { TurnScope } from "./context";
import type { ChatEvent } from "./events";

/** Everything a server-side tool may touch during a turn, already scoped to the user. */
export interface ToolContext extends TurnScope {
  /** Streams an event to the client (e.g. `memory_saved`). */
  emit(event: ChatEvent): void;
  /**
   * Per-turn counters, for caps a runaway model must not exceed within one turn; `TURN_BASE` says which turn
   * of the session this is.
   */
  turn: Map<string, number>;
  /**
   * The context sections injected into this turn's system prompt: section name -> ids (BuiltPrompt.injected).
   * Lets a tool refuse to overwrite what the model never saw, or saw at an older version.
   */
  injected: ReadonlyMap<string, string[]>;
  /**
   * Work the answer need not wait for (a log write, a counter): it finishes after the response is sent.
   * Absent where nothing outlives the call; the tool then awaits the work itself (see `deferOrRun`).
   */
  defer?: (work: () => Promise<unknown>) => void;
}

/**
 * In `ToolContext.turn`: how many messages the session's history held before this turn's user message. A turn
 * retried after a failure that rolled it back has the same base; a later turn has a larger one.
 */
export const TURN_BASE = "turn.base";

/**
 * A reason the model gives, as the user sees it (the stream's `tool_use`, an approval prompt) and as it is kept:
 * cleaned like any text memory stores (invisible characters removed, secrets redacted) once, in the schema,
 * before any tool reads it. Add `.min(1)` where a reason is required: a text with nothing visible in it is then
 * refused.
 */
export const ReasonText = z
  .string()
  .trim()
  .max(500)
  .overwrite((text) => cleanMemoryTextOrEmpty(text, 500));

/** Hands `work` to the context's `defer` when it has one, else runs it now. */
export async function deferOrRun(ctx: Pick<ToolContext, "defer">, work: () => Promise<unknown>): Promise<void> {
  if (ctx.defer) ctx.defer(work);
  else await work();
}

/** Expected failures are values the model can read, not exceptions. */
export type ToolResult = { content: string; isError?: boolean };

export interface Tool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  /** Where it runs: in this Worker, or on the client (the loop suspends). */
  runs: "server" | "client";
  /**
   * Whether a call waits for the user's approval. A function decides per call from the validated input
   * (e.g. only when the call touches something the user made); if it throws, the call waits. "every call":
   * always waits, even after the user answered `always` (forgetting memory is each time their decision).
   */
  needsApproval: boolean | "every call" | ((ctx: ToolContext, input: z.infer<S>) => Promise<boolean>);
  /** What the assistant is doing, shown to the user in the `tool_use` event. */
  describe(input: z.infer<S>): string;
  run(ctx: ToolContext, input: z.infer<S>): Promise<ToolResult>;
}

/** Checks a tool against its own input schema; the result is an ordinary Tool the registry can hold. */
export const defineTool = <S extends z.ZodType>(tool: Tool<S>): Tool => tool as unknown as Tool;

export type AnthropicToolDef = { name: string; description: string; input_schema: { type: "object"; [k: string]: unknown } };

/** Tools are fixed for the life of the isolate: each one's definition is built once, not on every model call. */
const definitions = new WeakMap<Tool, AnthropicToolDef>();

/**
 * The tool's JSON Schema comes from its zod schema; nothing is written twice. It describes what a caller may send
 * (zod's input side), so a field with a default is optional, as it is to `runTool`'s parse: the output side would
 * list it as required and make a schema-following client (an MCP client, the model) send every default itself.
 */
export function toAnthropicTool(tool: Tool): AnthropicToolDef {
  const known = definitions.get(tool);
  if (known) return known;
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, { io: "input" }) as Record<string, unknown>;
  const def = { name: tool.name, description: tool.description, input_schema: { ...schema, type: "object" as const } };
  definitions.set(tool, def);
  return def;
}

/** Validates the model's input and runs the tool; bad input and failures become `is_error` results. */
export async function runTool(tool: Tool, ctx: ToolContext, rawInput: unknown): Promise<ToolResult> {
  const parsed = tool.input.safeParse(rawInput);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => issueText(i)).join("; ");
    return { content: `Invalid input for ${tool.name}: ${issues}`, isError: true };
  }
  try {
    return await tool.run(ctx, parsed.data);
  } catch (err) {
    console.error(JSON.stringify({ tool: tool.name, error: describeFailure(err) }));
    return { content: `${tool.name} failed unexpectedly; nothing was changed.`, isError: true };
  }
}

export function describeTool(tool: Tool, rawInput: unknown): string {
  const parsed = tool.input.safeParse(rawInput);
  return parsed.success ? tool.describe(parsed.data) : `Calling ${tool.name}`;
}

/** The user's `always` does not cover this tool: each call waits for its own answer. */
export const asksEveryCall = (tool: Tool | undefined): boolean => tool?.needsApproval === "every call";

/**
 * Decides a call's approval. A per-call check sees only input its schema accepts (input it rejects is answered
 * with an is_error result before anyone is asked: see the bridge's dispatch).
 */
export async function approvalNeeded(tool: Tool, ctx: ToolContext, rawInput: unknown): Promise<boolean> {
  if (typeof tool.needsApproval === "boolean") return tool.needsApproval;
  if (tool.needsApproval === "every call") return true;
  const parsed = tool.input.safeParse(rawInput);
  if (!parsed.success) return false;
  try {
    return await tool.needsApproval(ctx, parsed.data);
  } catch (err) {
    console.error(JSON.stringify({ tool: tool.name, approval: "check_failed", error: describeFailure(err) }));
    return true;
  }
}
