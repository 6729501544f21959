import type { z } from "zod";
import { defineTool, type Tool } from "./tool";

/**
 * An MCP tool: it runs in this Worker (an MCP client has no tool loop of ours to suspend into) and never waits
 * for an approval (MCP calls happen outside any chat session, where no one could approve them).
 */
export const defineMcpTool = <S extends z.ZodType>(tool: Omit<Tool<S>, "runs" | "needsApproval">): Tool =>
  defineTool<S>({ ...tool, runs: "server", needsApproval: false });
