import type { z } from "zod";
import { defineTool, type Tool } from "./tool";

/**
/**
 * What a call can touch, which decides the OAuth scopes that allow it (src/oauth/scopes.ts): whether it
 * writes anything, and whether it is about coding lessons only (`lessons`) or the rest of the user's memory.
 */
export type McpAccess = { writes: boolean; area: "memory" | "lessons" };

/**
 * What an MCP client may tell its user about a tool before calling it (the spec's tool annotations). Each hint is
 * stated for every tool: the spec's defaults (not read-only, destructive, not idempotent, open world) describe a
 * dangerous tool, so a hint left out would make a harmless tool look like one. `readOnlyHint` is not written by
 * hand: it is `!access.writes`, the same fact the OAuth scopes read.
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

/** An MCP tool: the chat `Tool` shape, with what it may touch, a human title and the hints an MCP client shows. */
export type McpTool = Tool & { access: McpAccess; title: string; hints: McpToolHints };

/**
 * Declares an MCP tool: it runs in this Worker (an MCP client has no tool loop of ours to suspend into) and never
 * waits for an approval (MCP calls happen outside any chat session, where no one could approve them).
 */
export const defineMcpTool = <S extends z.ZodType>(
  tool: Omit<Tool<S>, "runs" | "needsApproval"> & { access: McpAccess; title: string; hints: Omit<McpToolHints, "readOnlyHint"> },
): McpTool => {
  const { access, title, hints, ...rest } = tool;
  return Object.assign(defineTool<S>({ ...rest, runs: "server", needsApproval: false }), {
    access,
    title,
    hints: { readOnlyHint: !access.writes, ...hints },
  });
};
