import { isObject, type JsonObject } from "./jsonfile.js";

/**
 * Claude Code's settings formats, edited as plain JSON so every key engram does not own survives untouched.
 * Hooks (settings.json): {"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "..."}]}]}}.
 * MCP servers (~/.claude.json or .mcp.json): {"mcpServers": {"engram": {"type": "http", "url", "headers"}}}.
 */
export const HOOK_EVENTS = ["Stop", "SessionEnd"] as const;
export const MCP_NAME = "engram";
/** Seconds Claude Code waits for the hook; the hook itself stops well before (its own budget). */
export const HOOK_TIMEOUT_SECONDS = 30;

/** Our hook command, whichever way it was installed: `engram hook`, `.../engram.js" hook`, `npx engram hook`. */
export const isEngramHookCommand = (command: unknown): boolean => typeof command === "string" && /\bengram(\.js)?["']?\s+hook(\s|$)/.test(command);

const clone = <T>(v: T): T => structuredClone(v);

type HookGroup = { matcher?: unknown; hooks?: unknown };

const groupsOf = (settings: JsonObject, event: string): HookGroup[] => {
  const hooks = settings.hooks;
  if (!isObject(hooks) || !Array.isArray(hooks[event])) return [];
  return hooks[event] as HookGroup[];
};

/** Commands of engram hooks installed for each event. */
export function findHooks(settings: JsonObject): { event: string; command: string }[] {
  const found: { event: string; command: string }[] = [];
  for (const event of HOOK_EVENTS)
    for (const group of groupsOf(settings, event))
      for (const h of Array.isArray(group.hooks) ? group.hooks : [])
        if (isObject(h) && isEngramHookCommand(h.command)) found.push({ event, command: String(h.command) });
  return found;
}

/** Removes engram's hook commands; groups and events left empty go too (other hooks stay as they were). */
export function withoutHooks(settings: JsonObject): JsonObject {
  const next = clone(settings);
  if (!isObject(next.hooks)) return next;
  const hooks = next.hooks;
  for (const event of HOOK_EVENTS) {
    if (!Array.isArray(hooks[event])) continue;
    const groups = (hooks[event] as HookGroup[])
      .map((g) => {
        if (!isObject(g) || !Array.isArray(g.hooks)) return g;
        const kept = g.hooks.filter((h) => !(isObject(h) && isEngramHookCommand(h.command)));
        return kept.length === g.hooks.length ? g : kept.length ? { ...g, hooks: kept } : null;
      })
      .filter((g) => g !== null);
    if (groups.length) hooks[event] = groups;
    else delete hooks[event];
  }
  if (Object.keys(hooks).length === 0) delete next.hooks;
  return next;
}

/** Adds (or replaces) engram's hook on Stop and SessionEnd; unchanged when exactly this command is there. */
export function withHooks(settings: JsonObject, command: string): JsonObject {
  const current = findHooks(settings);
  if (HOOK_EVENTS.every((e) => current.filter((h) => h.event === e).length === 1 && current.some((h) => h.event === e && h.command === command))) {
    return settings;
  }
  const next = withoutHooks(settings);
  const hooks = isObject(next.hooks) ? next.hooks : {};
  for (const event of HOOK_EVENTS) {
    const groups = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    hooks[event] = [...groups, { matcher: "", hooks: [{ type: "command", command, timeout: HOOK_TIMEOUT_SECONDS }] }];
  }
  next.hooks = hooks;
  return next;
}

export type McpEntry = { type: "http"; url: string; headers: Record<string, string> };

export const mcpEntry = (serverUrl: string, authorization: string): McpEntry => ({
  type: "http",
  url: `${serverUrl}/mcp`,
  headers: { Authorization: authorization },
});

/** The object holding `mcpServers`: the file itself, or for local scope `projects[cwd]` in ~/.claude.json. */
function container(root: JsonObject, projectKey: string | undefined, create: boolean): JsonObject | undefined {
  if (!projectKey) return root;
  if (!isObject(root.projects)) {
    if (!create) return undefined;
    root.projects = {};
  }
  const projects = root.projects as JsonObject;
  if (!isObject(projects[projectKey])) {
    if (!create) return undefined;
    projects[projectKey] = {};
  }
  return projects[projectKey] as JsonObject;
}

export function findMcp(root: JsonObject, projectKey?: string): unknown {
  const c = container(root, projectKey, false);
  return c && isObject(c.mcpServers) ? c.mcpServers[MCP_NAME] : undefined;
}

export function withMcp(root: JsonObject, entry: McpEntry, projectKey?: string): JsonObject {
  if (JSON.stringify(findMcp(root, projectKey)) === JSON.stringify(entry)) return root;
  const next = clone(root);
  const c = container(next, projectKey, true) as JsonObject;
  c.mcpServers = { ...(isObject(c.mcpServers) ? c.mcpServers : {}), [MCP_NAME]: entry };
  return next;
}

export function withoutMcp(root: JsonObject, projectKey?: string): JsonObject {
  if (findMcp(root, projectKey) === undefined) return root;
  const next = clone(root);
  const c = container(next, projectKey, false) as JsonObject;
  const servers = { ...(c.mcpServers as JsonObject) };
  delete servers[MCP_NAME];
  if (Object.keys(servers).length) c.mcpServers = servers;
  else delete c.mcpServers;
  return next;
}
