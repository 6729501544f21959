import type { z } from "zod";
import { defineTool, type Tool } from "./tool";

/**
 * What a call can touch, which decides the OAuth scopes that allow it (src/oauth/scopes.ts): whether it
 * writes anything, and whether it is about coding lessons only (`lessons`) or the rest of the user's memory.
 */
export type McpAccess = { writes: boolean; area: "memory" | "lessons" };

export type McpTool = Tool & { access: McpAccess };

/**
 * An MCP tool: it runs in this Worker (an MCP client has no tool loop of ours to suspend into) and never waits
 * for an approval (MCP calls happen outside any chat session, where no one could approve them).
 */
export const defineMcpTool = <S extends z.ZodType>(tool: Omit<Tool<S>, "runs" | "needsApproval"> & { access: McpAccess }): McpTool =>
  defineTool<S>({ ...tool, runs: "server", needsApproval: false }) as McpTool;
