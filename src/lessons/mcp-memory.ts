/**
 * MCP tools over the user's general memory (facts and brain documents), offered next to the lessons tools so
 * one MCP server gives any client the user's memory. They call the memory and brain capabilities' own
 * functions; nothing here writes their tables directly.
 */
import { z } from "zod";
import { findDocument } from "../brain/documents";
import { listMemory } from "../brain/memory";
import { defineTool } from "../core/tool";
import { listConnections } from "../memory/connections";
import { memoryDeps } from "../memory/deps";
import { INTERACTIVE_TYPES, recordObservations } from "../memory/events";
import { searchFacts } from "../memory/retrieval";

export const memorySearch = defineTool({
  name: "memory_search",
  description:
    "Search what engram knows about the user (facts learned from conversations: preferences, projects, people, decisions), best match first. Call it when the answer depends on the user's own context, before asking them something they may have told you already.",
  input: z.object({ query: z.string().trim().min(1).max(2000), k: z.number().int().min(1).max(20).default(5) }),
  runs: "server",
  needsApproval: false,
  describe: (i) => `Searching memory for ${i.query.slice(0, 60)}`,
  run: async (ctx, input) => {
    const active = (await listConnections(ctx.db, ctx.userId)).filter((c) => c.active).map((c) => c.id);
    const found = await searchFacts(memoryDeps(ctx.env, ctx.config, ctx.db), { userId: ctx.userId, query: input.query, k: input.k, connectionIds: active });
    if (!found.results.length) return { content: "No matching facts." };
    const lines = found.results.map((r) => `- ${r.text} (id ${r.id})`);
    return { content: `${found.weak ? "Weak matches only: these may not answer the question.\n" : ""}${lines.join("\n")}` };
  },
});

export const memoryRemember = defineTool({
  name: "memory_remember",
  description:
    "Record something durable about the user (a fact, a preference, project details, or a correction of something known wrongly). It is consolidated into long-term memory in the background. Not for coding rules: use brain_remember for those.",
  input: z.object({
    content: z.string().trim().min(1).max(2000).describe("Self-contained, e.g. 'Prefers pnpm over npm'"),
    category: z.enum(INTERACTIVE_TYPES).default("fact"),
  }),
  runs: "server",
  needsApproval: false,
  describe: (i) => `Remembering a ${i.category}`,
  run: async (ctx, input) => {
    const { events, budget } = await recordObservations(memoryDeps(ctx.env, ctx.config, ctx.db), { id: ctx.userId, plan: ctx.plan }, [
      { type: input.category, content: input.content, sourceMetadata: { source: "interactive", session_id: "mcp" } },
    ]);
    return budget.exhausted
      ? { content: `Noted (${events.length}), but today's memory budget is used up: it will be consolidated later.` }
      : { content: `Noted (${events.map((e) => e.id).join(", ")}); it will be consolidated into memory shortly.` };
  },
});

export const brainRead = defineTool({
  name: "brain_read",
  description:
    "Read one of the user's brain documents: SOUL (who the assistant should be for them), BIBLE (the rules of a site or business; give site), or MEMORY (the saved notes). Call it at the start of work that should follow the user's standing instructions.",
  input: z.object({ document: z.enum(["soul", "bible", "memory"]), site: z.string().trim().min(1).max(100).optional().describe("BIBLE only: the site") }),
  runs: "server",
  needsApproval: false,
  describe: (i) => `Reading ${i.document.toUpperCase()}`,
  run: async (ctx, input) => {
    if (input.document === "memory") {
      const { entries } = await listMemory(ctx.db, ctx.userId, { limit: 100, ...(input.site ? { site: input.site } : {}) });
      return { content: entries.length ? entries.map((e) => `- ${e.content}`).join("\n") : "MEMORY is empty." };
    }
    const doc = await findDocument(ctx.db, ctx.userId, input.document, input.site ?? null);
    return { content: doc?.content.trim() ? doc.content : `${input.document.toUpperCase()} is empty.` };
  },
});

export const memoryMcpTools = [memorySearch, memoryRemember, brainRead];
