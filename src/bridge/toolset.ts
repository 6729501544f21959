/**
 * The tools of one turn and where each call goes: a server tool runs here, unless it needs approval
 * that the session has not given once and for all; a client tool always goes to the client.
 * Calls that cannot run here become pending calls, all of one model message together.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { toolByName } from "../core/capability";
import type { ChatEvent, PendingCall } from "../core/events";
import { approvalNeeded, asksEveryCall, describeTool, runTool, type Tool, type ToolContext, type ToolResult, toAnthropicTool } from "../core/tool";
import { type ClientToolDef, toModelTool } from "./client-tools";
import { WEB_SEARCH_TOOL } from "./web-search";

export type TurnTools = { server: readonly Tool[]; client: readonly ClientToolDef[] };

/** Names a client tool may not take: the server tools', and web search's. */
export const reservedToolNames = (serverTools: readonly Tool[]): ReadonlySet<string> => new Set([...serverTools.map((t) => t.name), WEB_SEARCH_TOOL.name]);

/** A turn's tools: every server tool, or (resuming) the ones its continuation named, as this deployment has them. */
export const turnTools = (serverTools: readonly Tool[], client: readonly ClientToolDef[], serverNames?: readonly string[]): TurnTools => ({
  server: serverNames ? serverTools.filter((t) => serverNames.includes(t.name)) : serverTools,
  client,
});

export const modelTools = (t: TurnTools): Anthropic.ToolUnion[] => [...t.server.map(toAnthropicTool), ...t.client.map(toModelTool), WEB_SEARCH_TOOL];

type Route = { kind: "run"; tool: Tool } | { kind: "pending"; call: Omit<PendingCall, "call_id" | "tool_input">; reason: string } | { kind: "unknown" };

/** `approval`: the tool's per-call decision (approvalNeeded); without it a per-call tool is treated as needing approval. */
export function routeCall(tools: TurnTools, name: string, input: unknown, alwaysAllow: ReadonlySet<string>, approval?: boolean | "every call"): Route {
  const server = toolByName(tools.server, name);
  const allowed = alwaysAllow.has(name) && !asksEveryCall(server) && approval !== "every call";
  if (server) {
    const reason = describeTool(server, input);
    const gated = (approval === undefined ? server.needsApproval !== false : approval !== false) && !allowed;
    if (server.runs === "client") return { kind: "pending", call: { tool_name: name, runs: "client", needs_approval: gated }, reason };
    if (gated) return { kind: "pending", call: { tool_name: name, runs: "server", needs_approval: true }, reason };
    return { kind: "run", tool: server };
  }
  const client = tools.client.find((c) => c.name === name);
  if (!client) return { kind: "unknown" };
  const reason = client.mcp ? `Using ${client.mcp.tool} on ${client.mcp.server}` : `Using ${name}`;
  const call = { tool_name: name, runs: "client" as const, needs_approval: client.needs_approval && !allowed, ...(client.mcp ? { mcp: client.mcp } : {}) };
  return { kind: "pending", call, reason };
}

export const resultBlock = (toolUseId: string, r: ToolResult): Anthropic.ToolResultBlockParam => ({
  type: "tool_result",
  tool_use_id: toolUseId,
  content: r.content,
  ...(r.isError ? { is_error: true } : {}),
});

/**
 * Runs a builtin (server) tool by name; a tool this deployment no longer has is an is_error result. `approved`: the
 * user approved this very call.
 */
export async function runServerTool(tools: TurnTools, name: string, ctx: ToolContext, input: unknown, approved = false): Promise<ToolResult> {
  const tool = toolByName(tools.server, name);
  return tool ? runTool(tool, ctx, input, approved) : { content: `Unknown tool: ${name}`, isError: true };
}

/** Runs what can run here; returns the results so far and the calls left for the client. */
export async function dispatchCalls(
  calls: readonly Anthropic.ToolUseBlock[],
  tools: TurnTools,
  alwaysAllow: ReadonlySet<string>,
  ctx: ToolContext,
  emit: (e: ChatEvent) => void,
): Promise<{ results: Anthropic.ToolResultBlockParam[]; pending: PendingCall[] }> {
  const results: Anthropic.ToolResultBlockParam[] = [];
  const pending: PendingCall[] = [];
  for (const call of calls) {
    const server = toolByName(tools.server, call.name);
    // A builtin call whose input does not validate would run nothing: its error goes straight back to the model
    // rather than asking the user to approve it first.
    const invalid = server?.runs === "server" && !server.input.safeParse(call.input).success;
    const approval = server && !invalid ? await approvalNeeded(server, ctx, call.input) : undefined;
    const route: Route = server && invalid ? { kind: "run", tool: server } : routeCall(tools, call.name, call.input, alwaysAllow, approval);
    const reason = route.kind === "run" ? describeTool(route.tool, call.input) : route.kind === "pending" ? route.reason : `Calling ${call.name}`;
    emit({ type: "tool_use", id: call.id, name: call.name, input: call.input, reason });
    if (route.kind === "pending") {
      pending.push({ call_id: call.id, tool_input: call.input, ...route.call });
      continue;
    }
    const result = route.kind === "run" ? await runTool(route.tool, ctx, call.input) : { content: `Unknown tool: ${call.name}`, isError: true };
    emit({ type: "tool_result", id: call.id, name: call.name, ok: !result.isError });
    results.push(resultBlock(call.id, result));
  }
  return { results, pending };
}

/** tool_results in the order of the assistant message's tool_use blocks. */
export function inCallOrder(assistant: Anthropic.MessageParam, results: readonly Anthropic.ToolResultBlockParam[]): Anthropic.ToolResultBlockParam[] {
  const order = typeof assistant.content === "string" ? [] : assistant.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
  return [...results].sort((a, b) => order.indexOf(a.tool_use_id) - order.indexOf(b.tool_use_id));
}
