/**
 * The MCP server: every capability's MCP tools, resources and prompts (from the registry), for one authenticated
 * user, over the official SDK. Tools are the same `Tool` shape the chat loop runs: input validated by its zod
 * schema, bad input and failures returned as `isError` results the client's model can read. Resources and prompts
 * read the user's memory only; an unknown tool, prompt or resource is a JSON-RPC error, as the spec says.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { readConsent } from "../consent/settings";
import { toolByName } from "../core/capability";
import type { McpPrompt, McpPromptMessage } from "../core/mcp-prompt";
import type { McpResource, McpScope } from "../core/mcp-resource";
import type { McpTool } from "../core/mcp-tool";
import { offeredTools, runTool, toAnthropicTool } from "../core/tool";
import { issueText } from "../lib/issues";
import { rememberPrompt } from "./prompts";
import { isTemplate, readResource } from "./resources";

export const SERVER_INFO = { name: "engram", version: "0.1.0" };
export type { McpScope };

/** Values one completion returns at most (the spec's limit). */
const COMPLETIONS = 100;

/** The spec's code for a resource that does not exist (or is not the caller's). */
const RESOURCE_NOT_FOUND = -32002;

/** What the server offers besides tools: the capabilities' resources and prompts. */
export type McpOffer = { resources: readonly McpResource[]; prompts: readonly McpPrompt[] };

const promptArguments = (p: McpPrompt) =>
  Object.entries(p.args.shape).map(([name, field]) => ({
    name,
    ...(field.description ? { description: field.description } : {}),
    required: !field.safeParse(undefined).success,
  }));

const promptMessage = (m: McpPromptMessage) =>
  "text" in m
    ? { role: m.role, content: { type: "text" as const, text: m.text } }
    : { role: m.role, content: { type: "resource" as const, resource: m.resource } };

export function createMcpServer(tools: readonly McpTool[], scope: McpScope, offer: McpOffer): Server {
  const server = new Server(SERVER_INFO, {
    // Stateless: no session to hold a subscription or a list-changed stream (docs/mcp.md, "Resources").
    capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} },
    instructions:
      "engram is the user's long-term memory. Call brain_recall before writing code, choosing an approach or " +
      "debugging, with concrete nouns from the task; call brain_remember when the user corrects you or a hard-won " +
      "fix works.",
  });
  // "What do you remember" embeds the resources: with none the credential may read, it is not offered.
  const prompts = [...offer.prompts, ...(offer.resources.length ? [rememberPrompt(offer.resources)] : [])];

  // A tool writing only kinds of memory the user turned off is not listed; a call to it is refused (runTool).
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: offeredTools(tools, await readConsent(scope.db, scope.userId)).map((t) => {
      const def = toAnthropicTool(t);
      return { name: def.name, title: t.title, description: def.description, inputSchema: def.input_schema, annotations: { title: t.title, ...t.hints } };
    }),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = toolByName(tools, request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const result = await runTool(
      tool,
      { ...scope, sessionId: "mcp", siteId: null, projectId: null, emit: () => {}, turn: new Map(), injected: new Map() },
      request.params.arguments ?? {},
    );
    return { content: [{ type: "text", text: result.content }], ...(result.isError ? { isError: true } : {}) };
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const lists = await Promise.all(offer.resources.map(async (r) => (await r.list(scope)).map((entry) => ({ mimeType: r.mimeType, ...entry }))));
    return { resources: lists.flat() };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: offer.resources
      .filter(isTemplate)
      .map((r) => ({ uriTemplate: r.uriTemplate, name: r.name, title: r.title, description: r.description, mimeType: r.mimeType })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const found = await readResource(offer.resources, scope, request.params.uri);
    if (!found) throw new McpError(RESOURCE_NOT_FOUND, "Resource not found", { uri: request.params.uri });
    return { contents: [found] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: prompts.map((p) => ({ name: p.name, title: p.title, description: p.description, arguments: promptArguments(p) })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const prompt = prompts.find((p) => p.name === request.params.name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    const args = prompt.args.safeParse(request.params.arguments ?? {});
    if (!args.success)
      throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${prompt.name}: ${args.error.issues.map((i) => issueText(i)).join("; ")}`);
    return { description: prompt.description, messages: (await prompt.messages(scope, args.data)).map(promptMessage) };
  });

  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    const target = ref.type === "ref/prompt" ? prompts.find((p) => p.name === ref.name) : offer.resources.find((r) => r.uriTemplate === ref.uri);
    if (!target) throw new McpError(ErrorCode.InvalidParams, `Unknown ${ref.type === "ref/prompt" ? "prompt" : "resource template"}`);
    const complete = target.complete?.[argument.name];
    const values = complete ? (await complete(scope)).filter((v) => v.startsWith(argument.value)) : [];
    return { completion: { values: values.slice(0, COMPLETIONS), total: values.length, hasMore: values.length > COMPLETIONS } };
  });
  return server;
}
