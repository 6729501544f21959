/**
 * "Recall lessons for this task": the prompt a user picks before starting work in an MCP client. It puts the
 * lessons engram has for the task into the conversation (escaped, as brain_recall returns them) and asks the
 * model to follow those that apply.
 */
import { and, asc, eq, isNotNull } from "drizzle-orm";
import { z } from "zod";
import { defineMcpPrompt } from "../core/mcp-prompt";
import type { Db } from "../db/client";
import { lessons } from "../db/schema";
import { inlinePromptText } from "../lib/prompt-text";
import { recalledLessons } from "./mcp-tools";

/** Lessons a prompt brings in: enough to cover a task, few enough to read before starting. */
const PROMPT_LESSONS = 8;

export const recallLessonsPrompt = defineMcpPrompt({
  name: "recall_lessons",
  area: "lessons",
  title: "Recall lessons for this task",
  description: "Bring the coding lessons engram learned in earlier sessions that bear on the task you are about to start.",
  args: z.object({
    task: z.string().trim().min(1).max(2000).describe("What you are about to do, with its concrete nouns (library, error, file)"),
    project: z.string().trim().min(1).max(200).optional().describe("The project (e.g. the repository folder name): its lessons rank first"),
  }),
  messages: async (scope, args) => {
    const found = await recalledLessons(scope, { query: args.task, project: args.project ?? null, limit: PROMPT_LESSONS });
    const task = inlinePromptText(args.task);
    const text = found
      ? `I am about to work on: ${task}\n\nengram recalled these lessons from earlier sessions:\n${found}\n\n` +
        "Follow the ones that apply to this task and say which you are following. If one looks stale against the " +
        "current code, say so instead of following it."
      : `I am about to work on: ${task}\n\nengram has no lessons that match this task yet. Go ahead, and tell me ` +
        "if you learn something worth remembering (brain_remember saves it).";
    return [{ role: "user", text }];
  },
  complete: { project: (scope) => lessonProjects(scope.db, scope.userId) },
});

/** The projects the user has lessons for, in name order. */
async function lessonProjects(db: Db, userId: string): Promise<string[]> {
  const rows = await db
    .selectDistinct({ project: lessons.project })
    .from(lessons)
    .where(and(eq(lessons.userId, userId), isNotNull(lessons.project)))
    .orderBy(asc(lessons.project))
    .all();
  return rows.flatMap((r) => (r.project ? [r.project] : []));
}

export const lessonMcpPrompts = [recallLessonsPrompt];
