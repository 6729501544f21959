/**
 * The brain at `/mcp`: the `brain_read` tool, and the documents as resources (SOUL, the MEMORY notes, each site's
 * BIBLE and HEARTBEAT). What they return goes into the client's model's context, so it is escaped as every prompt
 * text is; every read names the authenticated user.
 */
import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import type { McpResource, McpScope } from "../core/mcp-resource";
import { defineMcpTool } from "../core/mcp-tool";
import type { Db } from "../db/client";
import { brainDocuments } from "../db/schema";
import { escapePromptText } from "../lib/prompt-text";
import { findDocument } from "./documents";
import { listMemory } from "./memory";
import { inlineText } from "./sanitize";

type Document = "soul" | "bible" | "memory" | "heartbeat";

/** MEMORY notes a read returns, newest first (the plan caps keep the list short; this bounds the answer anyway). */
const MEMORY_READ = 100;

/** A brain document as the client's model reads it: escaped stored text, "" when empty or absent. */
async function documentText(db: Db, userId: string, document: Document, site: string | null): Promise<string> {
  if (document === "memory") {
    const { entries } = await listMemory(db, userId, { limit: MEMORY_READ, ...(site ? { site } : {}) });
    return entries.map((e) => `- ${inlineText(e.content)}`).join("\n");
  }
  const doc = await findDocument(db, userId, document, site);
  return doc?.content.trim() ? escapePromptText(doc.content) : "";
}

export const brainRead = defineMcpTool({
  name: "brain_read",
  access: { writes: false, area: "memory" },
  title: "Read a brain document",
  description:
    "Read one of the user's brain documents: SOUL (who the assistant should be for them), BIBLE (the rules " +
    "of a site or business; give site), or MEMORY (the saved notes). Call it at the start of work that should " +
    "follow the user's standing instructions.",
  hints: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.object({ document: z.enum(["soul", "bible", "memory"]), site: z.string().trim().min(1).max(100).optional().describe("BIBLE only: the site") }),
  describe: (i) => `Reading ${i.document.toUpperCase()}`,
  run: async (ctx, input) => {
    const text = await documentText(ctx.db, ctx.userId, input.document, input.site ?? null);
    return { content: text || `${input.document.toUpperCase()} is empty.` };
  },
});

/** The sites where the user has a document of this kind, in id order. */
async function sitesWith(db: Db, userId: string, kind: "bible" | "heartbeat"): Promise<string[]> {
  const rows = await db
    .select({ site: brainDocuments.site })
    .from(brainDocuments)
    .where(and(eq(brainDocuments.userId, userId), eq(brainDocuments.kind, kind)))
    .orderBy(asc(brainDocuments.site))
    .all();
  return rows.map((r) => r.site);
}

/** One document every user has (possibly empty): listed always. */
const userDocument = (document: "soul" | "memory", title: string, description: string): McpResource => ({
  uriTemplate: `engram://brain/${document}`,
  area: "memory",
  name: document,
  title,
  description,
  mimeType: "text/markdown",
  list: async () => [{ uri: `engram://brain/${document}`, name: document, title, description }],
  read: (scope: McpScope) => documentText(scope.db, scope.userId, document, null),
});

/** A document per site: listed for the sites that have one; reading another site's is "not found". */
const siteDocument = (kind: "bible" | "heartbeat", title: string, description: string): McpResource => ({
  uriTemplate: `engram://sites/{site}/${kind}`,
  area: "memory",
  name: kind,
  title,
  description,
  mimeType: "text/markdown",
  list: async (scope) =>
    (await sitesWith(scope.db, scope.userId, kind)).map((site) => ({
      uri: `engram://sites/${encodeURIComponent(site)}/${kind}`,
      name: `${kind}:${site}`,
      title: `${title}: ${site}`,
    })),
  complete: { site: (scope) => sitesWith(scope.db, scope.userId, kind) },
  read: async (scope, vars) => {
    const site = vars.site ?? "";
    if (!(await findDocument(scope.db, scope.userId, kind, site))) return null;
    return documentText(scope.db, scope.userId, kind, site);
  },
});

export const brainMcpResources: readonly McpResource[] = [
  userDocument("soul", "SOUL", "Who the assistant should be for the user: their standing instructions and who they are."),
  userDocument("memory", "MEMORY", "The notes saved for the user, newest first."),
  siteDocument("bible", "BIBLE", "The rules of one of the user's sites or businesses."),
  siteDocument("heartbeat", "HEARTBEAT", "The latest state one of the user's sites reported (its sync)."),
];

export const brainMcpTools = [brainRead];
