/**
 * The user's own corrections of the two injected tiers: replacing the working-memory narrative, setting or
 * removing top-level scaffold keys, and restoring the tiers as they stood after an earlier revision. Each is a
 * memory revision (`memory_runs`, kind `edit` or `restore`) written in the same batch as the change, so a
 * consolidation that read the revision before it fails on the revision's unique index and is run again on top
 * of the user's version, never over it.
 */
import { and, desc, eq, gt, type SQL, sql } from "drizzle-orm";
import { changes, isConstraintError, runStatements } from "../db/batch";
import { type Db, newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { LostRace, retryLostRace } from "../db/race";
import { type Json, type JsonObject, memoryRuns, type ScaffoldMeta, users } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { broughtBack, type Forgotten, forgottenIn } from "../lib/forgotten";
import { cleanMemoryTextOrEmpty, cleanText } from "../lib/sanitize";
import { removedSentences } from "../lib/sentences";
import { wordCount } from "../lib/text";
import { cleanJson } from "./clean";
import { WORKING_MEMORY_WORDS } from "./consolidation-schema";
import { dropOldCopies, KEPT_COPIES, pruneTombstones, type Tiers } from "./tiers";

/** How large the user's edits may make the scaffold, as JSON (four times what a turn's prompt shows of it). */
const SCAFFOLD_EDIT_CHARS = 16_000;

/** The confidence of a scaffold key the user set: what they say about themselves is certain. */
const USER_SET_CONFIDENCE = 1;

/**
 * `forget`: what the user asked to forget, in one revision: profile keys removed, and the narrative rewritten
 * without it (when it mentioned it). Its summary remembers both (`forgotten_keys`, `forgotten_text`), so a
 * restore that would bring them back can say so first.
 */
export type TierEdit = { workingMemory: string } | { scaffold: Record<string, Json | null> } | { forget: { keys: readonly string[]; workingMemory?: string } };

/** The narrative as it will be stored; over the cap is refused rather than cut, so nothing the user wrote is lost silently. */
function preparedNarrative(raw: string): string {
  const text = cleanMemoryTextOrEmpty(raw);
  const words = wordCount(text);
  if (words > WORKING_MEMORY_WORDS) throw new AppError("limit_exceeded", `working_memory is ${words} words; at most ${WORKING_MEMORY_WORDS}`);
  return text;
}

/**
 * A revision the user asks for: its kind and summary, the tiers as they will stand after it, and what must still
 * hold when it commits (`requires`, checked inside the batch; when it no longer holds, nothing is written).
 */
type Revision = { kind: "edit" | "restore"; summary: JsonObject; tiers: Tiers; requires?: { condition: SQL; otherwise: string } };

/** The run a restore starts from, read in the same batch as the tiers and their revision. */
type SourceRun = { [K in keyof Tiers]: Tiers[K] | null };

/** What committed the latest revision, as a 409's message names it. */
const WHAT_WON: Record<(typeof memoryRuns.kind.enumValues)[number], string> = {
  consolidation: "a consolidation of new observations",
  edit: "another edit of the working memory or scaffold",
  restore: "a restore of an earlier revision",
  erase: "an erase of your memory",
};

/** The 409 of a revision that lost every attempt: what committed the revision it planned on, and that it may be sent again. */
async function lostTo(db: Db, userId: string): Promise<LostRace> {
  const last = await db.select({ kind: memoryRuns.kind }).from(memoryRuns).where(eq(memoryRuns.userId, userId)).orderBy(desc(memoryRuns.rev)).limit(1).get();
  const what = last ? WHAT_WON[last.kind] : "another change of your memory";
  return new LostRace(`${what} was saved while this change was being written, each time it was tried; nothing was written: send it again`);
}

/**
 * Reads the tiers and their revision (and the run `sourceRev`, when given) in one batch, computes the revision
 * `plan` makes of them, and commits it: the run, with its snapshot, first, then the user row (and the oldest
 * copy kept drops out). A consolidation, erase or other edit that commits a revision between the read and the
 * write makes the batch fail on the run's unique index; the revision is then planned again from what is current
 * (`retryLostRace`), and after the last attempt it is a 409 naming what won.
 */
async function revise(
  db: Db,
  userId: string,
  now: number,
  plan: (current: Tiers, source: SourceRun | undefined) => Revision,
  sourceRev?: number,
): Promise<{ rev: number; tiers: Tiers }> {
  try {
    return await retryLostRace(() => reviseOnce(db, userId, now, plan, sourceRev));
  } catch (err) {
    throw err instanceof LostRace ? await lostTo(db, userId) : err;
  }
}

async function reviseOnce(
  db: Db,
  userId: string,
  now: number,
  plan: (current: Tiers, source: SourceRun | undefined) => Revision,
  sourceRev?: number,
): Promise<{ rev: number; tiers: Tiers }> {
  const tiersRead = db
    .select({ workingMemory: users.workingMemory, scaffold: users.scaffold, scaffoldMeta: users.scaffoldMeta })
    .from(users)
    .where(eq(users.id, userId));
  const revRead = db
    .select({ rev: sql<number>`coalesce(max(${memoryRuns.rev}), 0)` })
    .from(memoryRuns)
    .where(eq(memoryRuns.userId, userId));
  const [user, last, source] =
    sourceRev === undefined
      ? [...(await db.batch([tiersRead, revRead])), []]
      : await db.batch([
          tiersRead,
          revRead,
          db
            .select({ workingMemory: memoryRuns.workingMemory, scaffold: memoryRuns.scaffold, scaffoldMeta: memoryRuns.scaffoldMeta })
            .from(memoryRuns)
            .where(and(eq(memoryRuns.userId, userId), eq(memoryRuns.rev, sourceRev))),
        ]);
  const current = user[0];
  if (!current) throw notFound("user");
  const { kind, summary, tiers, requires } = plan(current, source[0]);
  const rev = (last[0]?.rev ?? 0) + 1;
  const run = { id: newId("run"), userId, rev, kind, summary, eventIds: [], model: null, inputTokens: 0, outputTokens: 0, ...tiers, createdAt: now };
  const holds = requires?.condition ?? sql`true`;
  const results = await runStatements(db, [
    // First: a revision committed since the read makes the whole batch fail here.
    insertWhere(db, memoryRuns, run, holds),
    db
      .update(users)
      .set({ ...tiers, updatedAt: now })
      .where(and(eq(users.id, userId), holds)),
    dropOldCopies(db, userId, rev, holds),
  ]).catch((err: unknown) => {
    throw isConstraintError(err, "memory_runs") ? new LostRace("memory changed while this change was being written") : err;
  });
  if (requires && changes(results[0]) === 0) throw new AppError("conflict", requires.otherwise);
  return { rev, tiers };
}

/** Applies `edit` to the current tiers as an `edit` revision. */
export async function editTiers(db: Db, userId: string, edit: TierEdit, now = Date.now()): Promise<{ rev: number; tiers: Tiers }> {
  if ("forget" in edit) return forgetInTiers(db, userId, edit.forget, now);
  const narrative = "workingMemory" in edit ? preparedNarrative(edit.workingMemory) : undefined;
  const changes =
    "scaffold" in edit
      ? Object.entries(edit.scaffold).map(([raw, v]) => {
          const key = cleanText(raw, 100, "scaffold key");
          return [key, v === null ? null : cleanJson(v, key)] as const;
        })
      : [];
  return revise(db, userId, now, (current) => {
    if (narrative !== undefined)
      return { kind: "edit", summary: { working_memory_words: wordCount(narrative) }, tiers: { ...current, workingMemory: narrative } };
    const scaffold: JsonObject = { ...current.scaffold };
    const meta: ScaffoldMeta = { ...current.scaffoldMeta };
    for (const [key, value] of changes) {
      if (value === null) {
        // Remembered as removed, so an observation made before now cannot bring it back.
        delete scaffold[key];
        meta[key] = { removed: true, by: "user", updated_at: now };
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
    const summary = {
      scaffold_set: changes.filter(([, v]) => v !== null).map(([k]) => k),
      scaffold_removed: changes.filter(([, v]) => v === null).map(([k]) => k),
    };
    return { kind: "edit", summary, tiers: { ...current, scaffold, scaffoldMeta: pruneTombstones(meta) } };
  });
}

/** Removes forgotten keys (remembered as removed by the user) and swaps in the narrative rewritten without what was forgotten. */
function forgetInTiers(db: Db, userId: string, forget: { keys: readonly string[]; workingMemory?: string }, now: number) {
  const narrative = forget.workingMemory === undefined ? undefined : preparedNarrative(forget.workingMemory);
  return revise(db, userId, now, (current) => {
    const scaffold: JsonObject = { ...current.scaffold };
    const meta: ScaffoldMeta = { ...current.scaffoldMeta };
    const keys = forget.keys.filter((k) => Object.hasOwn(scaffold, k));
    for (const key of keys) {
      delete scaffold[key];
      meta[key] = { removed: true, by: "user", updated_at: now };
    }
    const text = narrative === undefined ? [] : removedSentences(current.workingMemory, narrative);
    const summary: JsonObject = { scaffold_removed: keys, forgotten_keys: keys, forgotten_text: text };
    if (narrative !== undefined) summary.working_memory_words = wordCount(narrative);
    const workingMemory = narrative ?? current.workingMemory;
    return { kind: "edit", summary, tiers: { workingMemory, scaffold, scaffoldMeta: pruneTombstones(meta) } };
  });
}

/** The forgets committed after revision `rev`: what each removed (their summaries). */
async function forgottenSince(db: Db, userId: string, rev: number): Promise<Forgotten[]> {
  const rows = await db
    .select({ summary: memoryRuns.summary })
    .from(memoryRuns)
    .where(and(eq(memoryRuns.userId, userId), gt(memoryRuns.rev, rev), eq(memoryRuns.kind, "edit")));
  return rows.map((r) => forgottenIn(r.summary)).filter((f) => f.keys.length + f.text.length > 0);
}

/**
 * Puts back the tiers as they stood after the user's revision `rev`, scaffold entries (confidence, when, by
 * whom) included, as a new `restore` revision. A revision an erase came after is gone with the erase, so it
 * is 404 like another user's; one recorded before snapshots were kept is a `conflict`.
 */
export async function restoreRevision(
  db: Db,
  userId: string,
  rev: number,
  now = Date.now(),
  bringBackForgotten = false,
): Promise<{ rev: number; tiers: Tiers }> {
  const forgotten = bringBackForgotten ? [] : await forgottenSince(db, userId, rev);
  return revise(
    db,
    userId,
    now,
    (_current, source) => {
      if (!source) throw notFound(`memory revision ${rev}`);
      const { workingMemory, scaffold, scaffoldMeta } = source;
      if (workingMemory === null || scaffold === null || scaffoldMeta === null)
        throw new AppError(
          "conflict",
          `revision ${rev} keeps no copy of the memory (it was recorded before copies were kept, is older than ` +
            `the latest ${KEPT_COPIES} revisions, or its copy was forgotten), so it cannot be restored`,
        );
      // Forgetting means forgotten: a restore never quietly undoes one; the caller asks the user and sends it again.
      const back = broughtBack(source, forgotten);
      if (back.length)
        throw new AppError(
          "conflict",
          `revision ${rev} is from before you asked to forget ${back.join(", ")}; restoring it would bring ` +
            `${back.length === 1 ? "that" : "those"} back. Nothing was restored: send it again with bring_back_forgotten to restore anyway`,
        );
      // Forgetting the copies (DELETE /v1/memory/runs/copies) writes no revision: a restore that read this copy
      // just before it must not bring the forgotten text back.
      const kept = sql`EXISTS (SELECT 1 FROM memory_runs WHERE user_id = ${userId} AND rev = ${rev} AND working_memory IS NOT NULL)`;
      return {
        kind: "restore",
        summary: { restored_rev: rev },
        tiers: { workingMemory, scaffold, scaffoldMeta },
        requires: { condition: kept, otherwise: `revision ${rev}'s copy of the memory was forgotten meanwhile, so it cannot be restored` },
      };
    },
    rev,
  );
}
