/**
 * The scopes an OAuth client can be granted on /mcp, and which MCP tools each allows. The consent page offers
 * them as three choices; a bearer API key (Claude Code, scripts) has every right its owner has.
 */
import type { McpAccess, McpTool } from "../core/mcp-tool";

export const SCOPES = {
  "memory:read": "Search your facts, read SOUL, BIBLE and MEMORY, recall coding lessons. It cannot change anything.",
  "memory:write": "Everything read-only allows, and remember facts and coding lessons.",
  lessons: "Recall, remember and extract coding lessons. Nothing else of your memory is reachable.",
} as const;

export type Scope = keyof typeof SCOPES;

export const SCOPE_NAMES = Object.keys(SCOPES) as [Scope, ...Scope[]];

/** Whether a token holding `granted` may make a call with this access. `memory:write` includes `memory:read`. */
export function permits(granted: readonly string[], access: McpAccess): boolean {
  if (granted.includes("memory:write")) return true;
  if (granted.includes("memory:read") && !access.writes) return true;
  return granted.includes("lessons") && access.area === "lessons";
}

/**
 * The tools a request may see and call: all of them for an API key (`granted` null), else those its scopes
 * allow. A tool left out answers as unknown, so a read-only token can never reach a write.
 */
export const toolsFor = (tools: readonly McpTool[], granted: readonly string[] | null): readonly McpTool[] =>
  granted === null ? tools : tools.filter((t) => permits(granted, t.access));
