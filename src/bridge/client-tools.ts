/**
 * Tools the client declares with a chat request: its own functions (`client_tools`) and the tools of
 * MCP servers on the user's machine (`mcp_servers`, surfaced to the model as `mcp__<server>__<tool>`).
 * They never run here: when the model calls one, the loop suspends and the client runs it.
 */
import { z } from "@hono/zod-openapi";
import { McpRef } from "../core/events";

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const MAX_SCHEMA_CHARS = 16_384;
export const MAX_CLIENT_TOOLS = 128;

const ToolName = z.string().regex(TOOL_NAME, "tool names match ^[a-zA-Z0-9_-]{1,64}$");

/** A server name must not contain `__`, so `mcp__<server>__<tool>` splits back unambiguously. */
const ServerName = z
  .string()
  .regex(/^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$/, "MCP server names use letters, digits, - and single _")
  .max(48);

const InputSchema = z
  .looseObject({ type: z.literal("object") })
  .refine((s) => JSON.stringify(s).length <= MAX_SCHEMA_CHARS, `input_schema must be at most ${MAX_SCHEMA_CHARS} characters of JSON`)
  .describe("JSON Schema of the tool's input; its type must be object");

const toolFields = {
  description: z.string().max(4096).default(""),
  input_schema: InputSchema,
  needs_approval: z.boolean().default(false).describe("The client asks the user before running it"),
};

export const ClientToolSpec = z.strictObject({ name: ToolName, ...toolFields }).openapi("ClientTool");

export const McpServerSpec = z
  .strictObject({
    name: ServerName,
    tools: z
      .array(z.strictObject({ name: ToolName, ...toolFields }))
      .min(1)
      .max(64),
  })
  .openapi("McpServer");

/** One client tool as the loop and the stored continuation know it. */
export const ClientToolDef = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.looseObject({ type: z.literal("object") }),
  needs_approval: z.boolean(),
  mcp: McpRef.optional(),
});
export type ClientToolDef = z.infer<typeof ClientToolDef>;

export const mcpName = (server: string, tool: string) => `mcp__${server}__${tool}`;

/** Flattens the request's declarations into one list; `issues` names every name that cannot be used. */
export function clientToolSet(
  clientTools: readonly z.infer<typeof ClientToolSpec>[],
  mcpServers: readonly z.infer<typeof McpServerSpec>[],
  reserved: ReadonlySet<string>,
): { tools: ClientToolDef[]; issues: string[] } {
  const tools: ClientToolDef[] = [...clientTools];
  for (const server of mcpServers) {
    for (const t of server.tools) tools.push({ ...t, name: mcpName(server.name, t.name), mcp: { server: server.name, tool: t.name } });
  }
  const issues: string[] = [];
  const seen = new Set<string>();
  for (const t of tools) {
    if (!TOOL_NAME.test(t.name)) issues.push(`${t.name}: the full tool name must be at most 64 characters`);
    else if (reserved.has(t.name)) issues.push(`${t.name}: the name of a server tool`);
    else if (!t.mcp && t.name.startsWith("mcp__")) issues.push(`${t.name}: names starting with mcp__ are for mcp_servers`);
    else if (seen.has(t.name)) issues.push(`${t.name}: declared twice`);
    seen.add(t.name);
  }
  if (tools.length > MAX_CLIENT_TOOLS) issues.push(`at most ${MAX_CLIENT_TOOLS} client and MCP tools in all`);
  return { tools, issues };
}

export const toModelTool = (t: ClientToolDef) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: t.input_schema });
