import type { z } from "zod";
import { defineTool, type Tool } from "./tool";

/**
 * What an MCP client may tell its user about a tool before calling it (the spec's tool annotations). Each hint is
 * stated for every tool: the spec's defaults (not read-only, destructive, not idempotent, open world) describe a
 * dangerous tool, so a hint left out would make a harmless tool look like one.
 */
export type McpToolHints = {
  /** It changes nothing the user has. */
  readOnlyHint: boolean;
  /** A write may delete or overwrite what the user has (meaningless, and false, for a read-only tool). */
  destructiveHint: boolean;
  /** Calling it again with the same arguments changes nothing more. */
  idempotentHint: boolean;
  /** It reaches beyond the user's own memory (the web, another service). */
  openWorldHint: boolean;
};

/** An MCP tool: the chat `Tool` shape, with a human title and the hints an MCP client shows its user. */
export type McpTool = Tool & { title: string; hints: McpToolHints };

/**
 * Declares an MCP tool: it runs in this Worker (an MCP client has no tool loop of ours to suspend into) and never
 * waits for an approval (MCP calls happen outside any chat session, where no one could approve them).
 */
export const defineMcpTool = <S extends z.ZodType>(tool: Omit<Tool<S>, "runs" | "needsApproval"> & { title: string; hints: McpToolHints }): McpTool => {
  const { title, hints, ...rest } = tool;
  return Object.assign(defineTool<S>({ ...rest, runs: "server", needsApproval: false }), { title, hints });
};
