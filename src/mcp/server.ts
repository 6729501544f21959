/**
 * The MCP server: every capability's MCP tools (the registry's `mcpTools`), for one authenticated user, over
 * the official SDK. Tools are the same `Tool` shape the chat loop runs: input validated by its zod schema,
 * bad input and failures returned as `isError` results the client's model can read.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { readConsent } from "../consent/settings";
import { toolByName } from "../core/capability";
import type { TurnScope } from "../core/context";
import { offeredTools, runTool, type Tool, type ToolContext, toAnthropicTool } from "../core/tool";

export const SERVER_INFO = { name: "engram", version: "0.1.0" };

/** Who the MCP request is for; MCP calls are not part of a chat session. */
export type McpScope = Omit<TurnScope, "sessionId" | "siteId" | "projectId"> & Pick<ToolContext, "defer">;

export function createMcpServer(tools: readonly Tool[], scope: McpScope): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions:
      "engram is the user's long-term memory. Call brain_recall before writing code, choosing an approach or " +
      "debugging, with concrete nouns from the task; call brain_remember when the user corrects you or a hard-won " +
      "fix works.",
  });
  // A tool writing only kinds of memory the user turned off is not listed; a call to it is refused (runTool).
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: offeredTools(tools, await readConsent(scope.db, scope.userId)).map((t) => {
      const def = toAnthropicTool(t);
      return { name: def.name, description: def.description, inputSchema: def.input_schema };
    }),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = toolByName(tools, request.params.name);
    if (!tool) return { content: [{ type: "text", text: `Unknown tool ${request.params.name}` }], isError: true };
    const result = await runTool(
      tool,
      { ...scope, sessionId: "mcp", siteId: null, projectId: null, emit: () => {}, turn: new Map(), injected: new Map() },
      request.params.arguments ?? {},
    );
    return { content: [{ type: "text", text: result.content }], ...(result.isError ? { isError: true } : {}) };
  });
  return server;
}
