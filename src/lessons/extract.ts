/**
 * Extraction of one transcript's pending bytes, fail-closed: the transcript counts as synced only after
 * every chunk of its signal moments went through the model and the lessons were stored. A failure stores
 * the `#cor` corrections verbatim (they are never lost), leaves the transcript pending and throws, so the
 * queue retries with backoff and, after its last attempt, the dead letter marks the transcript failed.
 * Lessons count against the plan's lesson quota: when the new ones would pass it, none is stored and the
 * transcript becomes `failed` with the reason, its bytes kept, so the next sync (or brain_extract) retries.
 * A caller that pays per call (brain_extract, held to the daily chat budget) can stop it between chunks: the
 * lessons of the chunks already extracted are stored, and the transcript stays pending with only the events from
 * the first one of the chunk not yet sent, so the next run sends each signal not yet sent, once, and none of the
 * others again (when the cut falls inside a long moment, a few of its context events there may go unsent).
 */

import { and, eq, lte, sql } from "drizzle-orm";
import { quotaMessage } from "../config/limits";
import { logWithheld, matchedPattern, neverRemember, type Withheld } from "../consent/sensitive";
import { type Consent, readConsent } from "../consent/settings";
import { runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { transcriptSegments, transcripts, users } from "../db/schema";
import { describeFailure } from "../lib/errors";
import { words } from "../memory/text";
import type { ModelClient } from "../model/anthropic";
import { callStructured } from "../model/structured";
import { recordUsage } from "../usage/record";
import type { LessonsDeps } from "./deps";
import { EXTRACTION_SYSTEM, type ExtractedLesson, extractionFormat, extractionPrompt, validateExtraction } from "./extraction-schema";
import { chunkMoments, findMoments } from "./signals";
import { type NewLesson, writeLessons } from "./store";
import { keepPendingEvents, pendingEvents, type TranscriptRow } from "./transcripts";

/**
 * The model an extraction calls, and the usage kind its tokens are recorded as: `extraction` for the background
 * model, `extraction_on_demand` for brain_extract's chat model (counted in the daily chat budget).
 */
export type ExtractionModel = { client: ModelClient; model: string; usageKind: "extraction" | "extraction_on_demand"; offline?: boolean };

/** Prompt characters per model call; more moments than this go in several calls, none is cut. */
export const CHUNK_CHARS = 24_000;

export class ExtractionFailed extends Error {
  override name = "ExtractionFailed";
}

/** Asked before every chunk after the first: why the extraction must stop there, or null to go on. */
export type StopCheck = () => Promise<string | null>;

export type ExtractionOutcome = {
  status: "nothing" | "synced" | "refused" | "stopped";
  moments: number;
  chunks: number;
  /** Chunks that went through the model (all of them unless `stopped`). */
  chunksDone: number;
  created: number;
  confirmed: number;
  dropped: number;
  corKept: number;
  /** Why nothing was stored (`refused`), or why the extraction stopped before its last chunk (`stopped`). */
  error?: string;
};

/** A `#cor` text is covered when a model lesson holds at least half of its words. */
function covered(cor: string, lessons: readonly ExtractedLesson[]): boolean {
  const want = new Set(words(cor).filter((w) => w.length > 2));
  if (!want.size) return true;
  return lessons.some((l) => {
    const have = new Set(words(`${l.title} ${l.content}`));
    let hit = 0;
    for (const w of want) if (have.has(w)) hit++;
    return hit / want.size >= 0.5;
  });
}

/** A `#cor` correction as a lesson, in the developer's own words. */
export function corLesson(text: string, project: string | null, session: string | null): NewLesson {
  const content = text.slice(0, 4000);
  const first = content.split(/(?<=[.!?])\s|\n/)[0] ?? content;
  const title = first.length > 120 ? `${first.slice(0, 117)}...` : first;
  return {
    type: "lesson",
    signal: "HIGH",
    flags: [],
    title: title.length >= 3 ? title : "Correction",
    content,
    tags: ["correction"],
    project,
    sourceSession: session,
    origin: "cor",
  };
}

const toNew = (l: ExtractedLesson, t: TranscriptRow): NewLesson => {
  const { scope, ...rest } = l;
  return { ...rest, project: scope === "project" ? t.project : null, sourceSession: t.sessionId, origin: "extracted" };
};

async function callModel(deps: LessonsDeps, model: ExtractionModel, t: TranscriptRow, chunk: string, never: readonly string[]) {
  const reply = await callStructured({
    client: model.client,
    model: model.model,
    system: EXTRACTION_SYSTEM,
    prompt: extractionPrompt(t.project, chunk, never),
    format: extractionFormat,
    maxTokens: 4096,
    userId: t.userId,
  });
  await recordUsage(deps.db, {
    userId: t.userId,
    kind: model.usageKind,
    model: model.model,
    usage: reply.usage,
    sessionId: null,
    prices: deps.config.modelPrices,
    offline: model.offline,
  });
  if (reply.error) throw new ExtractionFailed(reply.error.message);
  const valid = validateExtraction(reply.value);
  if (!valid) throw new ExtractionFailed("the extraction output has no lessons list");
  return valid;
}

/**
 * The lessons the user's consent lets the extraction store: none while lessons are off, and none holding one of
 * their sensitive patterns. What is left out is logged without its text.
 */
async function consented(db: Db, userId: string, consent: Consent, items: readonly NewLesson[], byModel: readonly string[] = []): Promise<NewLesson[]> {
  const { modes, sensitive } = consent;
  // The model names the entry it withheld a lesson for; only the user's own rule is logged, never its words.
  const withheld: Withheld[] = byModel.map((said) => {
    const rule = sensitive.find(
      (r) => `${r.kind}: ${r.text}`.toLowerCase() === said.trim().toLowerCase() || r.text.toLowerCase() === said.trim().toLowerCase(),
    );
    return { kind: "lessons", why: rule?.kind ?? "topic", rule: rule?.text ?? "(a rule the model did not name)", via: "extraction", what: "lesson" };
  });
  const kept =
    modes.lessons === "off"
      ? []
      : items.filter((l) => {
          const rule = matchedPattern(sensitive, l.title, l.content);
          if (rule) withheld.push({ kind: "lessons", why: "pattern", rule: rule.text, via: "extraction", what: "lesson" });
          return !rule;
        });
  if (modes.lessons === "off" && items.length)
    withheld.push({ kind: "lessons", why: "consent", rule: "off", via: "extraction", what: `${items.length} lessons` });
  await logWithheld(db, userId, null, withheld);
  return kept;
}

async function recordFailure(deps: LessonsDeps, t: TranscriptRow, error: string) {
  await deps.db
    .update(transcripts)
    .set({ attempts: sql`${transcripts.attempts} + 1`, error: error.slice(0, 300), updatedAt: deps.now() })
    .where(and(eq(transcripts.id, t.id), eq(transcripts.userId, t.userId)));
}

export async function extractTranscript(
  deps: LessonsDeps,
  model: ExtractionModel,
  userId: string,
  transcriptId: string,
  stopBefore?: StopCheck,
): Promise<ExtractionOutcome> {
  const t = await deps.db
    .select()
    .from(transcripts)
    .where(and(eq(transcripts.id, transcriptId), eq(transcripts.userId, userId)))
    .get();
  const none = { moments: 0, chunks: 0, chunksDone: 0, created: 0, confirmed: 0, dropped: 0, corKept: 0 };
  if (!t || t.bytesReceived <= t.bytesSynced) return { status: "nothing", ...none };
  const target = t.bytesReceived;
  const plan = (await deps.db.select({ plan: users.plan }).from(users).where(eq(users.id, userId)).get())?.plan ?? "free";
  const cap = deps.config.quotas[plan].lessons;
  const events = await pendingEvents(deps, userId, t.id, t.bytesSynced);
  const moments = findMoments(events);
  const chunks = chunkMoments(moments, CHUNK_CHARS);
  const cors = moments.flatMap((m) => m.cor);
  const consent = await readConsent(deps.db, userId);
  const never = neverRemember(consent.sensitive);
  const withheldByModel: string[] = [];
  const extracted: ExtractedLesson[] = [];
  let dropped = 0;
  let done = 0;
  let stopped: string | null = null;
  try {
    for (const chunk of chunks) {
      stopped = done && stopBefore ? await stopBefore() : null;
      if (stopped) break;
      const out = await callModel(deps, model, t, chunk.text, never);
      extracted.push(...out.lessons);
      withheldByModel.push(...out.withheld);
      dropped += out.dropped;
      done++;
    }
  } catch (err) {
    const reason = describeFailure(err);
    // Fail closed, but never lose an explicit correction.
    const kept = await writeLessons(
      deps.db,
      userId,
      await consented(
        deps.db,
        userId,
        consent,
        cors.map((c) => corLesson(c, t.project, t.sessionId)),
      ),
      deps.now(),
      cap,
      t.id,
    );
    await recordFailure(deps, t, reason);
    console.error(JSON.stringify({ lessons: "extraction_failed", transcript: t.id, cor_kept: kept.ids.length, error: reason }));
    throw new ExtractionFailed(reason);
  }
  // Stopped: only the corrections of the chunks sent are written now; the others travel with their events.
  const sentCors = stopped ? chunks.slice(0, done).flatMap((c) => c.moments.flatMap((m) => m.cor)) : cors;
  const uncovered = sentCors.filter((c) => !covered(c, extracted));
  const items = await consented(
    deps.db,
    userId,
    consent,
    [...extracted.map((l) => toNew(l, t)), ...uncovered.map((c) => corLesson(c, t.project, t.sessionId))],
    withheldByModel,
  );
  const now = deps.now();
  const written = await writeLessons(deps.db, userId, items, now, cap, t.id);
  const counts = { moments: moments.length, chunks: chunks.length, chunksDone: done };
  // Erased while the model ran: nothing is written back.
  if (written.gone) return { status: "nothing", ...none, ...counts, dropped };
  if (written.refused) {
    const error = `quota_exceeded: ${quotaMessage("lessons", plan, cap, `; the ${items.length} lessons of this transcript were not stored`)}`;
    await deps.db
      .update(transcripts)
      .set({ status: "failed", error: error.slice(0, 300), updatedAt: now })
      .where(and(eq(transcripts.id, t.id), eq(transcripts.userId, userId)));
    return { status: "refused", ...counts, created: 0, confirmed: 0, dropped, corKept: 0, error };
  }
  if (stopped) {
    // Pending from the first event of the first chunk not sent (the same object: moments and chunks slice `events`);
    // guarded so that a run which synced the transcript meanwhile wins.
    const first = chunks[done]?.moments[0]?.events[0];
    const from = first ? events.indexOf(first) : -1;
    await runStatements(deps.db, [
      ...keepPendingEvents(userId, t.id, t.bytesSynced, target, from < 0 ? events : events.slice(from), now),
      sql`UPDATE transcripts SET status = 'pending', updated_at = ${now}, attempts = 0, error = NULL,
        lessons_extracted = lessons_extracted + ${written.created}, entries_dropped = entries_dropped + ${dropped}
        WHERE id = ${t.id} AND user_id = ${userId} AND bytes_synced = ${t.bytesSynced}`,
    ]);
    if (dropped) console.log(JSON.stringify({ lessons: "entries_dropped", transcript: t.id, dropped }));
    return {
      status: "stopped",
      ...counts,
      created: written.created,
      confirmed: written.confirmed,
      dropped,
      corKept: sentCors.length,
      error: stopped,
    };
  }
  // Synced up to what was read; guarded so a concurrent run cannot move the mark backwards.
  await runStatements(deps.db, [
    sql`UPDATE transcripts SET bytes_synced = ${target}, status = CASE WHEN bytes_received = ${target} THEN 'synced' ELSE 'pending' END,
      synced_at = ${now}, updated_at = ${now}, attempts = 0, error = NULL,
      lessons_extracted = lessons_extracted + ${written.created}, entries_dropped = entries_dropped + ${dropped}
      WHERE id = ${t.id} AND user_id = ${userId} AND bytes_synced <= ${target}`,
    deps.db
      .delete(transcriptSegments)
      .where(and(eq(transcriptSegments.transcriptId, t.id), eq(transcriptSegments.userId, userId), lte(transcriptSegments.endByte, target))),
  ]);
  if (dropped) console.log(JSON.stringify({ lessons: "entries_dropped", transcript: t.id, dropped }));
  return {
    status: "synced",
    ...counts,
    created: written.created,
    confirmed: written.confirmed,
    dropped,
    corKept: cors.length,
  };
}
