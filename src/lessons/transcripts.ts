/**
 * Transcript ingestion and sync state. A client uploads a Claude Code session's JSONL from a byte offset
 * (whole lines); the server accepts it only at exactly the byte count it already holds, so a lost response,
 * a retry or a restart can never double-count or skip bytes. The upload is parsed, redacted and stored as
 * segments, and extraction is queued: at once for a new transcript, then each time it has grown by
 * REGROW_BYTES since its last successful extraction. A smaller tail is picked up by the sweep once idle.
 */
import { and, asc, eq, lt, sql } from "drizzle-orm";
import { type Quota, quotaExceeded } from "../config/limits";
import { runStatements, type Statement } from "../db/batch";
import { newId } from "../db/client";
import { newestFirst } from "../db/cursor";
import { inJson } from "../db/in-json";
import { snakeRow } from "../db/public-row";
import { transcriptSegments, transcripts } from "../db/schema";
import { AppError, describeFailure, notFound } from "../lib/errors";
import { sha256Hex } from "../lib/hash";
import { cleanMemoryText } from "../lib/sanitize";
import { EXTRACT_KIND, type LessonsDeps } from "./deps";
import { parseTranscript, type TranscriptEvent } from "./parse";

/** Largest `content` of one upload (UTF-8 bytes); a client sends a bigger file in several uploads. */
export const MAX_CONTENT_BYTES = 2 * 1024 * 1024;
/** A synced transcript that grew by this much since its last extraction is extracted again. */
export const REGROW_BYTES = 20 * 1024;
/** A pending tail smaller than REGROW_BYTES is extracted once the session has been quiet this long. */
export const IDLE_MS = 10 * 60_000;
/** One stored segment's events, as JSON (D1 rows stay far below their 2 MB cap). */
const SEGMENT_CHARS = 256 * 1024;

export type TranscriptRow = typeof transcripts.$inferSelect;

export const publicTranscript = (t: TranscriptRow) => ({
  ...snakeRow(t, ["sessionId", "project", "bytesReceived"]),
  last_synced_bytes: t.bytesSynced,
  ...snakeRow(t, ["totalBytes", "status", "attempts", "error", "lessonsExtracted", "entriesDropped", "syncedAt", "createdAt", "updatedAt"]),
});

/** The upload does not start where the server's copy ends; the client resends from `bytesReceived`. */
export class OffsetMismatch extends Error {
  override name = "OffsetMismatch";
  constructor(readonly bytesReceived: number) {
    super(`offset does not match the ${bytesReceived} bytes already received for this session`);
  }
}

export type Upload = { sessionId: string; project: string | null | undefined; offset: number; content: string; totalBytes: number };

const byteLength = (s: string) => new TextEncoder().encode(s).length;

function segmentsOf(events: readonly TranscriptEvent[]): TranscriptEvent[][] {
  const out: TranscriptEvent[][] = [];
  let current: TranscriptEvent[] = [];
  let size = 0;
  for (const e of events) {
    const n = JSON.stringify(e).length;
    if (current.length && size + n > SEGMENT_CHARS) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(e);
    size += n;
  }
  if (current.length) out.push(current);
  return out;
}

export const findTranscript = (deps: LessonsDeps, userId: string, sessionId: string) =>
  deps.db
    .select()
    .from(transcripts)
    .where(and(eq(transcripts.userId, userId), eq(transcripts.sessionId, sessionId)))
    .get();

export async function getTranscript(deps: LessonsDeps, userId: string, sessionId: string): Promise<TranscriptRow> {
  const row = await findTranscript(deps, userId, sessionId);
  if (!row) throw notFound("transcript");
  return row;
}

export async function listTranscripts(deps: LessonsDeps, userId: string, limit: number, cursor?: string): Promise<TranscriptRow[]> {
  const keys = { at: transcripts.updatedAt, id: transcripts.id };
  return newestFirst(deps.db.select().from(transcripts).$dynamic(), keys, { where: eq(transcripts.userId, userId), before: cursor, limit }).all();
}

export async function enqueueExtraction(deps: LessonsDeps, userId: string, transcriptId: string): Promise<boolean> {
  try {
    await deps.queue.send({ kind: EXTRACT_KIND, userId, transcriptId });
    return true;
  } catch (err) {
    // The transcript stays pending: the sweep enqueues it again.
    console.error(JSON.stringify({ lessons: "enqueue_failed", error: describeFailure(err) }));
    return false;
  }
}

/** Extraction is due for a transcript never extracted, one grown by REGROW_BYTES, or one that had failed. */
export const extractionDue = (t: Pick<TranscriptRow, "bytesReceived" | "bytesSynced" | "syncedAt" | "status">) =>
  t.bytesReceived > t.bytesSynced && (t.syncedAt === null || t.status === "failed" || t.bytesReceived - t.bytesSynced >= REGROW_BYTES);

/** `quota`: the plan's cap on stored transcripts, checked inside the INSERT of a new one (uploads to a known one always pass). */
export async function ingest(deps: LessonsDeps, userId: string, upload: Upload, quota?: Quota): Promise<{ transcript: TranscriptRow; queued: boolean }> {
  const bytes = byteLength(upload.content);
  if (bytes > MAX_CONTENT_BYTES) throw new AppError("payload_too_large", `content exceeds ${MAX_CONTENT_BYTES} bytes: upload the file in parts`);
  // An empty upload has nothing to store or extract: refused rather than kept as a transcript that is never synced.
  if (!bytes) throw new AppError("invalid_request", "content: empty; send at least one whole JSONL line");
  if (!upload.content.endsWith("\n")) throw new AppError("invalid_request", "content: must be whole JSONL lines, ending with a newline");
  const existing = await findTranscript(deps, userId, upload.sessionId);
  const received = existing?.bytesReceived ?? 0;
  const chunkHash = await sha256Hex(upload.content);
  if (upload.offset !== received) {
    // The same upload again (its response was lost): already applied, nothing to do.
    if (existing && upload.offset + bytes === received && chunkHash === existing.lastChunkHash) return { transcript: existing, queued: false };
    throw new OffsetMismatch(received);
  }
  const now = deps.now();
  const id = existing?.id ?? newId("trn");
  const end = upload.offset + bytes;
  const contentHash = await sha256Hex(`${existing?.contentHash ?? ""}${chunkHash}`);
  // The project name is stored and recalled with lessons: cleaned like every stored name.
  const project = upload.project === undefined ? (existing?.project ?? null) : upload.project === null ? null : cleanMemoryText(upload.project, 200, "project");
  const statements: Statement[] = [];
  if (!existing) {
    const withinQuota = quota ? sql`(SELECT count(*) FROM transcripts WHERE user_id = ${userId}) < ${quota.limit}` : sql`true`;
    statements.push(sql`INSERT INTO transcripts
        (id, user_id, session_id, project, bytes_received, total_bytes, content_hash, last_chunk_hash, status, created_at, updated_at)
      SELECT ${id}, ${userId}, ${upload.sessionId}, ${project}, ${end}, ${upload.totalBytes}, ${contentHash}, ${chunkHash}, 'pending', ${now}, ${now}
      WHERE ${withinQuota}
      ON CONFLICT(user_id, session_id) DO NOTHING`);
  } else {
    // Guarded by the byte count read above: of two racing uploads at one offset, only one applies.
    statements.push(sql`UPDATE transcripts SET bytes_received = ${end}, total_bytes = ${upload.totalBytes}, content_hash = ${contentHash},
      last_chunk_hash = ${chunkHash}, project = ${project}, updated_at = ${now},
      status = 'pending',
      attempts = CASE WHEN status = 'failed' THEN 0 ELSE attempts END
      WHERE id = ${id} AND user_id = ${userId} AND bytes_received = ${upload.offset}`);
  }
  const parsed = parseTranscript(upload.content);
  const segments = segmentsOf(parsed.events);
  // An upload of only bookkeeping lines still records its byte range, so extraction knows it was read.
  const groups = segments.length ? segments : [[]];
  groups.forEach((events, i) => {
    const segment = {
      id: newId("tsg"),
      start: i === 0 ? upload.offset : end,
      end,
      events: JSON.stringify(events),
    };
    // Written only if this upload's state write above applied (same transaction).
    statements.push(sql`INSERT INTO transcript_segments (id, user_id, transcript_id, start_byte, end_byte, events, created_at)
      SELECT ${segment.id}, ${userId}, ${id}, ${segment.start}, ${segment.end}, ${segment.events}, ${now}
      WHERE EXISTS (SELECT 1 FROM transcripts WHERE id = ${id} AND user_id = ${userId} AND bytes_received = ${end} AND updated_at = ${now})`);
  });
  await runStatements(deps.db, statements);
  const after = await findTranscript(deps, userId, upload.sessionId);
  // No row at all: the quota refused the new transcript (its segments are guarded by it, so none were written).
  if (!after && !existing && quota) throw quotaExceeded(quota);
  if (!after || after.id !== id || after.updatedAt !== now || after.bytesReceived !== end) throw new OffsetMismatch(after?.bytesReceived ?? 0);
  const queued = extractionDue(after) || existing?.status === "failed" ? await enqueueExtraction(deps, userId, id) : false;
  return { transcript: after, queued };
}

/**
 * Transcripts whose pending tail has been quiet for IDLE_MS (or whose queue message was lost): enqueue again.
 * A pending one with no unread bytes (an empty upload, which older versions accepted) has nothing to extract:
 * it becomes synced here rather than staying pending for ever.
 */
export async function sweepIdle(deps: LessonsDeps, limit = 100): Promise<number> {
  const now = deps.now();
  const rows = await deps.db
    .select({ id: transcripts.id, userId: transcripts.userId, unread: sql<number>`${transcripts.bytesReceived} > ${transcripts.bytesSynced}` })
    .from(transcripts)
    .where(and(eq(transcripts.status, "pending"), lt(transcripts.updatedAt, now - IDLE_MS)))
    .orderBy(asc(transcripts.updatedAt))
    .limit(limit)
    .all();
  const settled = rows.filter((r) => !r.unread).map((r) => r.id);
  if (settled.length)
    await deps.db
      .update(transcripts)
      .set({ status: "synced", updatedAt: now })
      .where(and(inJson(transcripts.id, settled), eq(transcripts.status, "pending"), sql`${transcripts.bytesReceived} <= ${transcripts.bytesSynced}`));
  let sent = 0;
  for (const r of rows) if (r.unread && (await enqueueExtraction(deps, r.userId, r.id))) sent++;
  return sent;
}

/**
 * Statements that leave `events` as all that is pending of the bytes `fromByte`..`toByte` (the rest of them was
 * extracted): that range's segments are replaced, each new one starting at `fromByte` so that it still reads before
 * later uploads. Applied only while `bytes_synced` is still `fromByte`.
 */
export function keepPendingEvents(
  userId: string,
  transcriptId: string,
  fromByte: number,
  toByte: number,
  events: readonly TranscriptEvent[],
  now: number,
): Statement[] {
  const unsynced = sql`EXISTS (SELECT 1 FROM transcripts WHERE id = ${transcriptId} AND user_id = ${userId} AND bytes_synced = ${fromByte})`;
  return [
    sql`DELETE FROM transcript_segments WHERE user_id = ${userId} AND transcript_id = ${transcriptId}
      AND end_byte > ${fromByte} AND end_byte <= ${toByte} AND ${unsynced}`,
    ...segmentsOf(events).map(
      (group) => sql`INSERT INTO transcript_segments (id, user_id, transcript_id, start_byte, end_byte, events, created_at)
        SELECT ${newId("tsg")}, ${userId}, ${transcriptId}, ${fromByte}, ${toByte}, ${JSON.stringify(group)}, ${now} WHERE ${unsynced}`,
    ),
  ];
}

/** The stored events of a transcript's bytes after `fromByte`, in order. */
export async function pendingEvents(deps: LessonsDeps, userId: string, transcriptId: string, fromByte: number): Promise<TranscriptEvent[]> {
  const rows = await deps.db
    .select({ events: transcriptSegments.events })
    .from(transcriptSegments)
    .where(and(eq(transcriptSegments.userId, userId), eq(transcriptSegments.transcriptId, transcriptId), sql`${transcriptSegments.endByte} > ${fromByte}`))
    .orderBy(asc(transcriptSegments.startByte), sql`rowid`)
    .all();
  return rows.flatMap((r) => r.events as unknown as TranscriptEvent[]);
}
