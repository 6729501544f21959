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

/**
 * Whether a request may make a call with this access: an API key (`granted` null) always; an OAuth token when its
 * scopes allow it (`memory:write` includes `memory:read`). The one rule for tools, and for anything else /mcp serves.
 */
export function allows(granted: readonly string[] | null, access: McpAccess): boolean {
  if (granted === null || granted.includes("memory:write")) return true;
  if (granted.includes("memory:read") && !access.writes) return true;
  return granted.includes("lessons") && access.area === "lessons";
}

/** The tools a request may see and call. A tool left out answers as unknown, so a read-only token never reaches a write. */
export const toolsFor = (tools: readonly McpTool[], granted: readonly string[] | null): readonly McpTool[] => tools.filter((t) => allows(granted, t.access));
