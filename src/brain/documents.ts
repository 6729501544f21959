/**
 * SOUL (per user) and BIBLE (per user and site): whole-document replacement, every write a new
 * version row. Optimistic concurrency without transactions: a write is planned from one read and
 * committed in one batch whose document update is conditional on the version read; the version row
 * (unique per document and version) is in the same batch, so a writer that lost a race fails on the
 * constraint and its whole batch rolls back (`LostRace`: a 409 with Retry-After, after a blind write's retries).
 */
import { and, eq, sql } from "drizzle-orm";
import { allOf, changes, runBatch, runGuarded } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { LostRace, retryLostRace } from "../db/race";
import type { Plan } from "../db/schema";
import { brainDocuments, brainVersions } from "../db/schema";
import { AppError } from "../lib/errors";
import { alreadyDecided, approveStatement, isPending, proposalPending } from "./guards";
import { LABEL, prepareText } from "./limits";
import { findSite, siteCapError, siteExists, siteInsert } from "./sites";

export type DocKind = "soul" | "bible";
export type Author = "assistant" | "user";
export type DocumentRow = typeof brainDocuments.$inferSelect;

/** SOUL lives under site '' (the column is part of the unique key, so it cannot be NULL). */
export const siteKey = (kind: DocKind | "heartbeat", site: string | null) => (kind === "soul" ? "" : (site ?? ""));

export async function findDocument(db: Db, userId: string, kind: DocKind | "heartbeat", site: string | null): Promise<DocumentRow | undefined> {
  return db
    .select()
    .from(brainDocuments)
    .where(and(eq(brainDocuments.userId, userId), eq(brainDocuments.kind, kind), eq(brainDocuments.site, siteKey(kind, site))))
    .get();
}

/** A replacement that keeps less than half of a substantial document probably lost text by accident. */
export function looksTruncated(before: string, after: string): boolean {
  return before.length >= 200 && after.length < before.length / 2;
}

export type WriteInput = {
  userId: string;
  plan: Plan;
  kind: DocKind;
  site: string | null;
  /** Raw text: it is sanitized and limit-checked here, on every path. */
  content: string;
  author: Author;
  sessionId: string | null;
  /** The version the writer read; 0 means "the document must not exist yet". */
  expectedVersion?: number;
  note?: string;
  /** Marks this pending proposal approved in the same batch. */
  approves?: string;
};

export type WriteResult = { document: DocumentRow; version: number; changed: boolean; truncated: boolean };

/** Checks a replacement without writing it: sanitized text, plan cap, and the site for a BIBLE. */
export function prepareContent(plan: Plan, kind: DocKind, site: string | null, raw: string): string {
  if (kind === "bible" && !site) throw new AppError("invalid_request", "BIBLE needs an active site");
  return prepareText(plan, kind, raw);
}

export const staleVersion = (kind: DocKind, current: number, expected: number) =>
  new AppError("conflict", `${LABEL[kind]} is at version ${current}, not ${expected}; reload it and apply your change again`);

const lostRace = (kind: DocKind) => `${LABEL[kind]} changed while this write was in flight; reload it and try again`;

/** A write decided from one read: what the text becomes, over which version. `commitWrite` applies it only if that still holds. */
export type WritePlan = { input: WriteInput; content: string; site: string; current: DocumentRow | undefined };

export async function planWrite(db: Db, input: WriteInput): Promise<WritePlan> {
  const { userId, kind, expectedVersion } = input;
  const content = prepareContent(input.plan, kind, input.site, input.content);
  const site = siteKey(kind, input.site);
  const current = await findDocument(db, userId, kind, site);
  const currentVersion = current?.version ?? 0;
  if (expectedVersion !== undefined && expectedVersion !== currentVersion) throw staleVersion(kind, currentVersion, expectedVersion);
  return { input, content, site, current };
}

/**
 * Applies a plan in one batch. Every statement is guarded by every condition the write depends on: the
 * version read (the UPDATE's WHERE, and the unique version row), the proposal it approves still pending,
 * and for a BIBLE its site (registered in the same batch, within the plan's site cap). So the batch
 * applies whole or not at all, whatever happened since the read.
 */
export async function commitWrite(db: Db, plan: WritePlan): Promise<WriteResult> {
  const { input, content, site, current } = plan;
  const { userId, kind, approves } = input;
  const now = Date.now();
  const currentVersion = current?.version ?? 0;
  const pending = approves ? proposalPending(userId, approves) : undefined;
  if (current && current.content === content) {
    if (approves) {
      const asRead = sql`EXISTS (SELECT 1 FROM brain_documents WHERE id = ${current.id} AND version = ${currentVersion})`;
      const [approved] = await runBatch(db, approveStatement(db, userId, approves, now, asRead));
      if (changes(approved) === 0) throw await refusal(db, plan);
    }
    return { document: current, version: currentVersion, changed: false, truncated: false };
  }

  const version = currentVersion + 1;
  const truncated = looksTruncated(current?.content ?? "", content);
  const note = [
    input.note,
    truncated
      ? `possible truncation: ${current?.content.length ?? 0} -> ${content.length} characters, version ${currentVersion} keeps the previous text`
      : null,
  ]
    .filter(Boolean)
    .join("; ");
  const written: DocumentRow = { id: current?.id ?? newId("doc"), userId, kind, site, content, version, stale: false, updatedAt: now };
  const guard = allOf(pending, kind === "bible" ? siteExists(userId, site) : undefined);
  const document = current
    ? db
        .update(brainDocuments)
        .set({ content, version, updatedAt: now })
        .where(and(eq(brainDocuments.id, current.id), eq(brainDocuments.userId, userId), eq(brainDocuments.version, currentVersion), guard))
    : insertWhere(db, brainDocuments, written, guard);
  const versionId = newId("ver");
  const versionRow = insertWhere(
    db,
    brainVersions,
    {
      id: versionId,
      documentId: written.id,
      userId,
      version,
      content,
      author: input.author,
      sessionId: input.sessionId,
      truncated,
      note: note || null,
      createdAt: now,
    },
    guard,
  );
  const approve = approves ? [approveStatement(db, userId, approves, now, sql`EXISTS (SELECT 1 FROM brain_versions WHERE id = ${versionId})`)] : [];
  // A BIBLE's site is registered in the batch itself: a site deleted since the read cannot leave an orphaned BIBLE.
  const results =
    kind === "bible"
      ? await runGuarded(db, lostRace(kind), siteInsert(db, userId, input.plan, site, null, pending), document, versionRow, ...approve)
      : await runGuarded(db, lostRace(kind), document, versionRow, ...approve);
  if (changes(results[kind === "bible" ? 1 : 0]) === 0) throw await refusal(db, plan);
  return { document: written, version, changed: true, truncated };
}

/** Why a guarded write did not apply. */
async function refusal(db: Db, plan: WritePlan): Promise<AppError> {
  const { userId, kind, approves } = plan.input;
  if (approves && !(await isPending(db, userId, approves))) return alreadyDecided();
  if (kind === "bible" && !(await findSite(db, userId, plan.site))) return siteCapError(plan.input.plan);
  return new LostRace(lostRace(kind));
}

/**
 * Plans and commits a write. A blind one (no `expectedVersion`) that loses a race is planned again on top of what
 * won (`retryLostRace`); one that names the version it read is not, since that version is gone.
 */
export async function writeDocument(db: Db, input: WriteInput): Promise<WriteResult> {
  const write = async () => commitWrite(db, await planWrite(db, input));
  return input.expectedVersion === undefined ? retryLostRace(write) : write();
}
