import { z } from "zod";
import { type Consent, KIND_LABEL, type MemoryKind, readConsent } from "../consent/settings";
import { isFenced, userMoving } from "../db/fence";
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
  /**
   * The kinds of memory the tool writes, and which one a call writes (default: the first). The user's consent mode
   * for that kind decides (consent/settings.ts): `off`, the tool is not offered while every kind it writes is off,
   * and a call is refused; `ask`, each call waits for the user's approval; `auto`, as `needsApproval` says.
   */
  remembers?: { kinds: readonly [MemoryKind, ...MemoryKind[]]; kindOf?(input: z.infer<S>): MemoryKind };
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

/** The kind of memory a validated call writes, or null for a tool that writes none. */
const rememberedKind = (tool: Tool, input: unknown): MemoryKind | null => (tool.remembers ? (tool.remembers.kindOf?.(input) ?? tool.remembers.kinds[0]) : null);

/** The tools a user's consent lets the model see: one whose every kind of memory is off is not offered at all. */
export const offeredTools = <T extends Tool>(tools: readonly T[], consent: Consent): T[] =>
  tools.filter((t) => !t.remembers || t.remembers.kinds.some((k) => consent.modes[k] !== "off"));

/**
 * The consent check every write makes before it runs, read fresh (a mode changed while a call waited applies):
 * `approved` says the user approved this very call in the stream; without it, `ask` cannot be honoured here.
 */
async function consentRefusal(tool: Tool, ctx: ToolContext, input: unknown, approved: boolean): Promise<ToolResult | null> {
  const kind = rememberedKind(tool, input);
  if (!kind) return null;
  const mode = (await readConsent(ctx.db, ctx.userId)).modes[kind];
  const label = KIND_LABEL[kind];
  if (mode === "off")
    return { content: `The user has turned off remembering ${label}. Nothing was saved; do not tell them you will remember it.`, isError: true };
  if (mode === "ask" && !approved)
    return { content: `The user approves each write of ${label}, and this call was not approved by them. Nothing was saved.`, isError: true };
  return null;
}

/**
 * Validates the model's input and runs the tool; bad input, a write the user's consent forbids and failures become
 * `is_error` results. `approved`: the user approved this call (an answer to its approval request).
 */
export async function runTool(tool: Tool, ctx: ToolContext, rawInput: unknown, approved = false): Promise<ToolResult> {
  const parsed = tool.input.safeParse(rawInput);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => issueText(i)).join("; ");
    return { content: `Invalid input for ${tool.name}: ${issues}`, isError: true };
  }
  try {
    const refused = await consentRefusal(tool, ctx, parsed.data, approved);
    if (refused) return refused;
    return await tool.run(ctx, parsed.data);
  } catch (err) {
    console.error(JSON.stringify({ tool: tool.name, error: describeFailure(err) }));
    if (isFenced(err)) return { content: `${tool.name} could not write now: ${userMoving().message}. Nothing was changed.`, isError: true };
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
 * with an is_error result before anyone is asked: see the bridge's dispatch). A memory write whose kind the user
 * set to `ask` waits for every call ("every call": an earlier `always` does not cover it); one set to `off` runs
 * straight to its refusal, asking no one.
 */
export async function approvalNeeded(tool: Tool, ctx: ToolContext, rawInput: unknown): Promise<boolean | "every call"> {
  const parsed = tool.input.safeParse(rawInput);
  const kind = parsed.success ? rememberedKind(tool, parsed.data) : null;
  if (kind) {
    const mode = (await readConsent(ctx.db, ctx.userId)).modes[kind];
    if (mode === "ask") return "every call";
    if (mode === "off") return false;
  }
  if (typeof tool.needsApproval === "boolean") return tool.needsApproval;
  if (tool.needsApproval === "every call") return true;
  if (!parsed.success) return false;
  try {
    return await tool.needsApproval(ctx, parsed.data);
  } catch (err) {
    console.error(JSON.stringify({ tool: tool.name, approval: "check_failed", error: describeFailure(err) }));
    return true;
  }
}
