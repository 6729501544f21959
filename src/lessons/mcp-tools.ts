/**
 * The coding-lessons tools MCP clients (Claude Code, Claude Desktop, agent frameworks) call. Their descriptions
 * tell the client's model when to call them: recall before acting, remember after a correction.
 */
import { and, eq, gt, sql } from "drizzle-orm";
import { z } from "zod";
import { quotaOf } from "../config/limits";
import type { McpScope } from "../core/mcp-resource";
import { defineMcpTool } from "../core/mcp-tool";
import type { ToolContext } from "../core/tool";
import { transcripts } from "../db/schema";
import { AppError, describeFailure } from "../lib/errors";
import { escapePromptText, inlinePromptText } from "../lib/prompt-text";
import { chatBudgetRefusal } from "../usage/budget";
import { lessonsDeps } from "./deps";
import { extractTranscript } from "./extract";
import { FLAGS, LESSON_TYPES, type LessonType, SIGNALS } from "./extraction-schema";
import { extractionModel } from "./queue";
import { recall } from "./recall";
import { remember } from "./remember";
import type { LessonRow } from "./store";

const Project = z.string().trim().min(1).max(200);

/**
 * One lesson as the client's model reads it. Its text came from a transcript (a fetched page, a command's output)
 * through extraction, so it is escaped: it cannot start an entry of its own, close a tag or leave a fence open.
 */
export function formatLesson(l: LessonRow): string {
  const flags = l.flags.length ? ` ${l.flags.join(" ")}` : "";
  const where = l.project ? ` project=${inlinePromptText(l.project)}` : " global";
  const content = escapePromptText(l.content).replace(/\n/g, "\n  ");
  return `- [${l.type} ${l.signal}${flags}] ${inlinePromptText(l.title)}\n  ${content}\n  (id ${l.id};${where}; confirmed ${l.confirmations}x)`;
}

/**
 * The lessons recalled for a task at `/mcp` (brain_recall, the recall_lessons prompt), formatted for the client's
 * model, most relevant first; null when none match. Each recall is logged as the `mcp` client's.
 */
export async function recalledLessons(
  scope: McpScope,
  q: { query: string; project?: string | null; type?: LessonType; limit: number },
): Promise<string | null> {
  const hits = await recall(
    scope.db,
    { userId: scope.userId, query: q.query, project: q.project ?? null, type: q.type, limit: q.limit, client: "mcp" },
    Date.now(),
    scope.defer,
  );
  return hits.length ? `${hits.length} lesson(s), most relevant first:\n${hits.map((h) => formatLesson(h.lesson)).join("\n")}` : null;
}

export const brainRecall = defineMcpTool({
  name: "brain_recall",
  access: { writes: false, area: "lessons" },
  title: "Recall coding lessons",
  description:
    "Search the user's coding lessons (corrections, antipatterns, decisions, patterns, snippets learned in " +
    "earlier sessions). Call it BEFORE writing code, choosing an approach, adding a dependency or debugging " +
    "an error, with concrete nouns from the task (library, function, error message, tool). Results for the " +
    "given project come first, then global ones. If a lesson applies, follow it; if it looks stale against " +
    "the current code, say so.",
  // Reads lessons; counting a lesson's recalls and logging the recall is bookkeeping, not a change to what it says.
  hints: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.object({
    query: z.string().trim().min(1).max(2000).describe("Concrete nouns from the task: library, function, error text, tool"),
    project: Project.optional().describe("The current project (e.g. the repository folder name): its lessons rank first"),
    type: z.enum(LESSON_TYPES).optional(),
    limit: z.number().int().min(1).max(20).default(5),
  }),
  describe: (i) => `Recalling lessons about ${i.query.slice(0, 60)}`,
  run: async (ctx, input) => {
    const found = await recalledLessons(ctx, input);
    return { content: found ?? "No lessons match. Nothing learned about this yet." };
  },
});

export const brainRemember = defineMcpTool({
  name: "brain_remember",
  access: { writes: true, area: "lessons" },
  title: "Save a coding lesson",
  description:
    "Save a coding lesson now, without waiting for the end-of-session extraction. Call it when the user corrects " +
    "you, when a fix finally works after failed attempts, or when a decision is made that future sessions " +
    "must respect. Write it as a rule with its reason, naming concrete tools, files or functions. Saving " +
    "the same lesson twice keeps one.",
  // Idempotent by content: the same lesson saved twice is one lesson (its id derives from its text).
  hints: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.object({
    title: z.string().trim().min(3).max(200).describe("One line naming the rule"),
    content: z.string().trim().min(10).max(4000).describe("The rule and why, self-contained and actionable"),
    type: z.enum(LESSON_TYPES).default("lesson"),
    signal: z.enum(SIGNALS).default("MED").describe("HIGH for corrections and costly mistakes"),
    flags: z.array(z.enum(FLAGS)).max(3).default([]),
    tags: z.array(z.string()).max(12).default([]),
    project: Project.nullable().default(null).describe("The project it is true of; null when it holds in any codebase"),
  }),
  remembers: { kinds: ["lessons"] },
  describe: (i) => `Saving the lesson "${i.title.slice(0, 60)}"`,
  run: async (ctx, input) => {
    try {
      const out = await remember(ctx.db, ctx.userId, input, Date.now(), quotaOf(ctx.config.quotas, ctx.plan, "lessons"));
      return { content: `${out.created ? "Saved" : "Already known"}: ${out.lesson.id} (${out.lesson.title})` };
    } catch (err) {
      if (err instanceof AppError && (err.code === "invalid_request" || err.code === "quota_exceeded" || err.code === "forbidden"))
        return { content: `Not saved: ${err.message}`, isError: true };
      throw err;
    }
  },
});

/** On-demand extraction runs at most this many transcripts per call (each is one or more model calls). */
const EXTRACT_NOW = 3;

/**
 * brain_extract spends the chat model at the user's request, so it is held to the daily chat budget like a chat
 * turn: checked before each transcript and between the chunks of one (each chunk is a model call), its tokens
 * counted as `extraction_on_demand`, so it goes over the budget by at most one chunk's tokens. Over the budget
 * nothing more is called: the lessons of the chunks already extracted are stored, and the rest of the transcript
 * stays pending for the background extraction (the background model, outside this budget).
 */
async function extractNow(ctx: ToolContext, sessionId: string | undefined) {
  const deps = lessonsDeps(ctx.env, ctx.config, ctx.db);
  const pending = await ctx.db
    .select({ id: transcripts.id, sessionId: transcripts.sessionId })
    .from(transcripts)
    .where(
      and(
        eq(transcripts.userId, ctx.userId),
        gt(transcripts.bytesReceived, transcripts.bytesSynced),
        sessionId ? eq(transcripts.sessionId, sessionId) : sql`1`,
      ),
    )
    .limit(EXTRACT_NOW)
    .all();
  if (!pending.length)
    return {
      content: sessionId
        ? `Nothing pending for session ${sessionId}: upload its transcript first, or it is already extracted.`
        : "No transcript is waiting for extraction.",
    };
  const model = extractionModel(ctx.env, "chat");
  const lines: string[] = [];
  const keptFor = "Its bytes are kept for the background extraction, or for brain_extract after the reset.";
  const budgetRefusal = async () => (await chatBudgetRefusal(ctx.db, ctx.userId, ctx.config))?.message ?? null;
  let ran = 0;
  for (const t of pending) {
    const refused = await budgetRefusal();
    if (refused) {
      lines.push(`${t.sessionId} stays pending, not extracted: ${refused}. ${keptFor}`);
      continue;
    }
    ran++;
    try {
      const out = await extractTranscript(deps, model, ctx.userId, t.id, budgetRefusal);
      const learned = `${out.created} new lesson(s), ${out.confirmed} confirmed, ${out.dropped} invalid entries dropped`;
      lines.push(
        out.status === "refused"
          ? `${t.sessionId}: not stored (${out.error})`
          : out.status === "stopped"
            ? `${t.sessionId}: ${learned} from ${out.chunksDone} of its ${out.chunks} parts; the rest stays pending, not extracted: ${out.error}. ${keptFor}`
            : `${t.sessionId}: ${learned}`,
      );
    } catch (err) {
      lines.push(`${t.sessionId}: extraction failed (${describeFailure(err).slice(0, 120)}); it stays pending and will be retried`);
    }
  }
  return { content: lines.join("\n"), ...(ran ? {} : { isError: true }) };
}

export const brainExtract = defineMcpTool({
  name: "brain_extract",
  access: { writes: true, area: "lessons" },
  title: "Extract lessons now",
  description:
    "Extract lessons now from transcripts already uploaded to engram but not yet processed, with the conversation " +
    "model instead of waiting for background extraction. Call it when the user asks to learn from a session " +
    "right away (e.g. before ending it). Give session_id to extract one session.",
  // Adds lessons, never removes any. Not idempotent: each call takes the next pending transcripts (3 at most).
  hints: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: z.object({ session_id: z.string().trim().min(1).max(100).optional().describe("A Claude Code session id; omitted: the oldest pending transcripts") }),
  remembers: { kinds: ["lessons"] },
  describe: () => "Extracting lessons",
  run: (ctx, input) => extractNow(ctx, input.session_id),
});

export const lessonMcpTools = [brainRecall, brainRemember, brainExtract];
