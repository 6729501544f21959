/**
 * The user's own corrections of the two injected tiers: replacing the working-memory narrative, and
 * setting or removing top-level scaffold keys. Each edit is a memory revision (`memory_runs`, kind `edit`)
 * written in the same batch as the change, so a consolidation that read the revision before it fails on
 * the revision's unique index and is run again on top of the user's text, never over it.
 */
import { eq, sql } from "drizzle-orm";
import { isConstraintError, runStatements } from "../db/batch";
import { type Db, newId } from "../db/client";
import { type Json, type JsonObject, memoryRuns, type ScaffoldMeta, users } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { cleanText, stripInvisible } from "../lib/sanitize";
import { WORKING_MEMORY_WORDS } from "./consolidation-schema";
import { wordCount } from "./text";

/** How large the user's edits may make the scaffold, as JSON (four times what a turn's prompt shows of it). */
const SCAFFOLD_EDIT_CHARS = 16_000;

/** The confidence of a scaffold key the user set: what they say about themselves is certain. */
const USER_SET_CONFIDENCE = 1;

export type TierEdit = { workingMemory: string } | { scaffold: Record<string, Json | null> };

/** Invisible and control characters go from every string of a value, as from any text the user stores. */
function cleanJson(v: Json): Json {
  if (typeof v === "string") return stripInvisible(v).trim();
  if (Array.isArray(v)) return v.map(cleanJson);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [stripInvisible(k).trim(), cleanJson(x)]));
  return v;
}

/** The narrative as it will be stored; over the cap is refused rather than cut, so nothing the user wrote is lost silently. */
function preparedNarrative(raw: string): string {
  const text = raw.trim() === "" ? "" : cleanText(raw, 20_000, "working_memory");
  const words = wordCount(text);
  if (words > WORKING_MEMORY_WORDS) throw new AppError("limit_exceeded", `working_memory is ${words} words; at most ${WORKING_MEMORY_WORDS}`);
  return text;
}

/** Applies `edit` to the current tiers; retried when a consolidation commits a revision between the read and the write. */
export async function editTiers(db: Db, userId: string, edit: TierEdit, now = Date.now()): Promise<void> {
  const narrative = "workingMemory" in edit ? preparedNarrative(edit.workingMemory) : undefined;
  const changes =
    "scaffold" in edit ? Object.entries(edit.scaffold).map(([k, v]) => [cleanText(k, 100, "scaffold key"), v === null ? null : cleanJson(v)] as const) : [];
  for (let attempt = 0; ; attempt++) {
    const [user, rev] = await db.batch([
      db.select({ scaffold: users.scaffold, scaffoldMeta: users.scaffoldMeta }).from(users).where(eq(users.id, userId)),
      db
        .select({ rev: sql<number>`coalesce(max(${memoryRuns.rev}), 0)` })
        .from(memoryRuns)
        .where(eq(memoryRuns.userId, userId)),
    ]);
    const current = user[0];
    if (!current) throw notFound("user");
    const scaffold: JsonObject = { ...current.scaffold };
    const meta: ScaffoldMeta = { ...current.scaffoldMeta };
    for (const [key, value] of changes) {
      if (value === null) {
        delete scaffold[key];
        delete meta[key];
      } else {
        scaffold[key] = value;
        meta[key] = { confidence: USER_SET_CONFIDENCE, updated_at: now, by: "user" };
      }
    }
    // The user's own keys cannot grow the profile without bound (every consolidation prompt carries all of it):
    // an edit that leaves it larger than the cap is refused; one that shrinks an oversized profile is not.
    const size = JSON.stringify(scaffold).length;
    if (size > SCAFFOLD_EDIT_CHARS && size > JSON.stringify(current.scaffold).length)
      throw new AppError("limit_exceeded", `the scaffold would be ${size} characters of JSON; at most ${SCAFFOLD_EDIT_CHARS}`);
    const summary: JsonObject =
      narrative !== undefined
        ? { working_memory_words: wordCount(narrative) }
        : { scaffold_set: changes.filter(([, v]) => v !== null).map(([k]) => k), scaffold_removed: changes.filter(([, v]) => v === null).map(([k]) => k) };
    try {
      await runStatements(db, [
        // First: a consolidation that committed this revision since the read makes the whole batch fail here.
        db.insert(memoryRuns).values({ id: newId("run"), userId, rev: (rev[0]?.rev ?? 0) + 1, kind: "edit", summary, createdAt: now }),
        db
          .update(users)
          .set(narrative !== undefined ? { workingMemory: narrative, updatedAt: now } : { scaffold, scaffoldMeta: meta, updatedAt: now })
          .where(eq(users.id, userId)),
      ]);
      return;
    } catch (err) {
      if (!isConstraintError(err, "memory_runs") || attempt >= 2) {
        if (isConstraintError(err, "memory_runs")) throw new AppError("conflict", "memory is being consolidated right now; try again in a moment");
        throw err;
      }
    }
  }
}
