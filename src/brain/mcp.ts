/**
 * The brain capability's MCP tool: read SOUL, a site's BIBLE or the MEMORY notes from any MCP client. What it
 * returns goes into the client's model's context, so it is escaped as every prompt text is.
 */
import { z } from "zod";
import { defineMcpTool } from "../core/mcp-tool";
import { escapePromptText } from "../lib/prompt-text";
import { findDocument } from "./documents";
import { listMemory } from "./memory";
import { inlineText } from "./sanitize";

export const brainRead = defineMcpTool({
  name: "brain_read",
  access: { writes: false, area: "memory" },
  description:
    "Read one of the user's brain documents: SOUL (who the assistant should be for them), BIBLE (the rules " +
    "of a site or business; give site), or MEMORY (the saved notes). Call it at the start of work that should " +
    "follow the user's standing instructions.",
  input: z.object({ document: z.enum(["soul", "bible", "memory"]), site: z.string().trim().min(1).max(100).optional().describe("BIBLE only: the site") }),
  describe: (i) => `Reading ${i.document.toUpperCase()}`,
  run: async (ctx, input) => {
    if (input.document === "memory") {
      const { entries } = await listMemory(ctx.db, ctx.userId, { limit: 100, ...(input.site ? { site: input.site } : {}) });
      return { content: entries.length ? entries.map((e) => `- ${inlineText(e.content)}`).join("\n") : "MEMORY is empty." };
    }
    const doc = await findDocument(ctx.db, ctx.userId, input.document, input.site ?? null);
    return { content: doc?.content.trim() ? escapePromptText(doc.content) : `${input.document.toUpperCase()} is empty.` };
  },
});

export const brainMcpTools = [brainRead];
