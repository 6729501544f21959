/**
 * SOUL (per user) and BIBLE (per user and site): whole-document replacement, every write a new
 * version row. Optimistic concurrency without transactions: the document update is conditional on
 * the version read, and the version row (unique per document and version) is written in the same
 * batch, so a writer that lost a race fails on the constraint and its whole batch rolls back.
 */
import { and, eq, type SQL } from "drizzle-orm";
import type { Plan } from "../auth/service";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { brainDocuments, brainProposals, brainVersions } from "../db/schema";
import { AppError } from "../http/errors";
import { runGuarded } from "./batch";
import { checkLength, LABEL } from "./limits";
import { sanitizeBrainContent } from "./sanitize";
import { siteStatements } from "./sites";

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
  const content = sanitizeBrainContent(raw);
  checkLength(plan, kind, content);
  return content;
}

export async function writeDocument(db: Db, input: WriteInput): Promise<WriteResult> {
  const { userId, kind } = input;
  const content = prepareContent(input.plan, kind, input.site, input.content);
  const site = siteKey(kind, input.site);
  const current = await findDocument(db, userId, kind, site);
  const currentVersion = current?.version ?? 0;
  if (input.expectedVersion !== undefined && input.expectedVersion !== currentVersion) {
    throw new AppError("conflict", `${LABEL[kind]} is at version ${currentVersion}, not ${input.expectedVersion}; reload it and apply your change again`);
  }
  if (current && current.content === content) {
    if (input.approves) await approveStatement(db, userId, input.approves, Date.now());
    return { document: current, version: currentVersion, changed: false, truncated: false };
  }

  const version = currentVersion + 1;
  const now = Date.now();
  const truncated = looksTruncated(current?.content ?? "", content);
  const note = [input.note, truncated ? `possible truncation: ${current?.content.length ?? 0} -> ${content.length} characters, version ${currentVersion} keeps the previous text` : null]
    .filter(Boolean)
    .join("; ");
  const documentId = current?.id ?? newId("doc");
  const statements = kind === "bible" ? await siteStatements(db, userId, input.plan, site) : [];
  const document = current
    ? db
        .update(brainDocuments)
        .set({ content, version, updatedAt: now })
        .where(and(eq(brainDocuments.id, current.id), eq(brainDocuments.userId, userId), eq(brainDocuments.version, currentVersion)))
    : db.insert(brainDocuments).values({ id: documentId, userId, kind, site, content, version, updatedAt: now });
  const versionRow = db.insert(brainVersions).values({
    id: newId("ver"),
    documentId,
    userId,
    version,
    content,
    author: input.author,
    sessionId: input.sessionId,
    truncated,
    note: note || null,
    createdAt: now,
  });
  if (input.approves) statements.push(approveStatement(db, userId, input.approves, now));
  await runGuarded(db, `${LABEL[kind]} changed while this write was in flight; reload it and try again`, document, versionRow, ...statements);
  const written: DocumentRow = { id: documentId, userId, kind, site, content, version, stale: false, updatedAt: now };
  return { document: written, version, changed: true, truncated };
}

export const approveStatement = (db: Db, userId: string, proposalId: string, now: number, also?: SQL) =>
  db
    .update(brainProposals)
    .set({ status: "approved", decidedAt: now })
    .where(and(eq(brainProposals.id, proposalId), eq(brainProposals.userId, userId), eq(brainProposals.status, "pending"), also));
