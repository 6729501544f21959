/** A lesson saved directly (brain_remember, POST /v1/lessons): validated like an extracted one, idempotent by content. */
import { z } from "zod";
import { type Quota, quotaExceeded } from "../config/limits";
import { logWithheld, matchedPattern } from "../consent/sensitive";
import { readConsent } from "../consent/settings";
import type { Db } from "../db/client";
import { AppError } from "../lib/errors";
import { issueText } from "../lib/issues";
import { cleanMemoryText } from "../lib/sanitize";
import { ExtractedLesson, FLAGS, LESSON_TYPES, SIGNALS } from "./extraction-schema";
import { getLesson, type LessonRow, writeLessons } from "./store";

export const RememberInput = z.strictObject({
  title: z.string().trim().min(3).max(200).describe("One line naming the rule, with the concrete nouns someone would search for"),
  content: z.string().trim().min(10).max(4000).describe("The rule and why, self-contained and actionable"),
  type: z.enum(LESSON_TYPES).default("lesson"),
  signal: z.enum(SIGNALS).default("MED"),
  flags: z.array(z.enum(FLAGS)).max(3).default([]),
  tags: z.array(z.string()).max(12).default([]),
  project: z.string().trim().min(1).max(200).nullable().default(null).describe("The project it is true of; null for any project"),
});
export type RememberInput = z.input<typeof RememberInput>;

/** Over the plan's lesson quota: 403 `quota_exceeded`, nothing written (restating a stored lesson still works). */
export async function remember(db: Db, userId: string, raw: RememberInput, now: number, quota: Quota): Promise<{ lesson: LessonRow; created: boolean }> {
  const parsed = RememberInput.safeParse(raw);
  const checked = parsed.success ? ExtractedLesson.safeParse({ ...parsed.data, scope: parsed.data.project ? "project" : "global" }) : parsed;
  if (!parsed.success || !checked.success) {
    const issues = (parsed.success ? checked.error : parsed.error)?.issues ?? [];
    throw new AppError(
      "invalid_request",
      issues
        .slice(0, 3)
        .map((i) => issueText(i))
        .join("; ") || "invalid lesson",
    );
  }
  const input = parsed.data;
  const { scope: _scope, ...checkedLesson } = checked.data as ExtractedLesson;
  // Read back into prompts (recall), so cleaned like every other stored text.
  const lesson = {
    ...checkedLesson,
    title: cleanMemoryText(checkedLesson.title, 200, "title"),
    content: cleanMemoryText(checkedLesson.content, 4000, "content"),
  };
  const project = input.project === null ? null : cleanMemoryText(input.project, 200, "project");
  const rule = matchedPattern((await readConsent(db, userId)).sensitive, lesson.title, lesson.content, project ?? "");
  if (rule) {
    await logWithheld(db, userId, null, [{ kind: "lessons", why: "pattern", rule: rule.text, via: "remember", what: "lesson" }]);
    throw new AppError("forbidden", "not saved: the lesson holds one of the user's sensitive patterns (never to remember)");
  }
  const out = await writeLessons(db, userId, [{ ...lesson, project, sourceSession: null, origin: "remembered" }], now, quota.limit);
  if (out.refused) throw quotaExceeded(quota);
  const id = out.ids[0];
  if (!id) throw new Error("remember wrote no lesson");
  return { lesson: await getLesson(db, userId, id), created: out.created > 0 };
}
