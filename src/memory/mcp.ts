/**
 * The memory capability at `/mcp`: tools to search the user's facts and record an observation, and working memory
 * as a resource, so any MCP client reaches the same memory the chat does.
 */
import { z } from "zod";
import type { McpResource } from "../core/mcp-resource";
import { defineMcpTool } from "../core/mcp-tool";
import { escapePromptText } from "../lib/prompt-text";
import { listConnections } from "./connections";
import { memoryDeps } from "./deps";
import { INTERACTIVE_TYPES, recordObservations } from "./events";
import { readTiers } from "./inspect";
import { recordRecall, searchAnswer, searchFacts } from "./retrieval";
import { WITHHELD } from "./tools";

export const memorySearch = defineMcpTool({
  name: "memory_search",
  access: { writes: false, area: "memory" },
  title: "Search memory",
  description:
    "Search what engram knows about the user (facts learned from conversations: preferences, projects, people, " +
    "decisions), best match first. Call it when the answer depends on the user's own context, before asking " +
    "them something they may have told you already.",
  // Read-only for the user's memory; the search's embedding is recorded as usage.
  hints: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.object({ query: z.string().trim().min(1).max(2000), k: z.number().int().min(1).max(20).default(5) }),
  describe: (i) => `Searching memory for ${i.query.slice(0, 60)}`,
  run: async (ctx, input) => {
    const active = (await listConnections(ctx.db, ctx.userId)).filter((c) => c.active).map((c) => c.id);
    const deps = memoryDeps(ctx.env, ctx.config, ctx.db);
    const found = await searchFacts(deps, { userId: ctx.userId, query: input.query, k: input.k, connectionIds: active });
    // The query's embedding is usage, as for the HTTP search (a search is not a recall: no fact counts it).
    await recordRecall(deps, ctx.userId, [], found.embeddingTokens);
    return { content: searchAnswer(found) };
  },
});

export const memoryRemember = defineMcpTool({
  name: "memory_remember",
  access: { writes: true, area: "memory" },
  title: "Remember about the user",
  description:
    "Record something durable about the user (a fact, a preference, project details, or a correction of something " +
    "known wrongly). It is consolidated into long-term memory in the background. Not for coding rules: use " +
    "brain_remember for those.",
  // Adds an observation; consolidation may later supersede an older fact with it (a correction), never delete one.
  hints: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: z.object({
    content: z.string().trim().min(1).max(2000).describe("Self-contained, e.g. 'Prefers pnpm over npm'"),
    category: z.enum(INTERACTIVE_TYPES).default("fact"),
  }),
  remembers: { kinds: ["facts"] },
  describe: (i) => `Remembering a ${i.category}`,
  run: async (ctx, input) => {
    const { events, budget, withheld } = await recordObservations(memoryDeps(ctx.env, ctx.config, ctx.db), { id: ctx.userId, plan: ctx.plan }, [
      { type: input.category, content: input.content, sourceMetadata: { source: "interactive", session_id: "mcp" } },
    ]);
    if (!events.length && withheld) return { content: WITHHELD, isError: true };
    return budget.exhausted
      ? { content: `Noted (${events.length}), but today's memory budget is used up: it will be consolidated later.` }
      : { content: `Noted (${events.map((e) => e.id).join(", ")}); it will be consolidated into memory shortly.` };
  },
});

/** Working memory: the short narrative of what is going on with the user lately, injected into every chat turn. */
const workingMemory: McpResource = {
  uriTemplate: "engram://memory/working",
  area: "memory",
  name: "working-memory",
  title: "Working memory",
  description: "What is going on with the user lately: the narrative engram keeps up to date from conversations.",
  mimeType: "text/plain",
  list: async () => [{ uri: "engram://memory/working", name: "working-memory", title: "Working memory" }],
  read: async (scope) => escapePromptText((await readTiers(scope.db, scope.userId)).workingMemory.trim()),
};

export const memoryMcpTools = [memorySearch, memoryRemember];
export const memoryMcpResources: readonly McpResource[] = [workingMemory];
