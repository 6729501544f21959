/** Content-hash ids: the same lesson for the same user and project always gets the same id (idempotent re-syncs). */
import { sha256Hex } from "../lib/hash";

/** Case, whitespace and trailing punctuation do not make a lesson new. */
export const normalizeLesson = (text: string) =>
  text
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/[\s.!;,:]+$/, "")
    .trim();

export async function lessonId(userId: string, project: string | null, type: string, content: string): Promise<string> {
  const hex = await sha256Hex([userId, project ?? "", type, normalizeLesson(content)].join("\u0000"));
  return `les_${hex.slice(0, 32)}`;
}

export const LESSON_ID_RE = /^les_[0-9a-f]{32}$/;
