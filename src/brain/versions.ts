/** Version history of SOUL and BIBLE: list, read, diff, and roll back (a rollback is a new version). */
import { and, desc, eq, lt } from "drizzle-orm";
import type { Db } from "../db/client";
import { snakeRow } from "../db/public-row";
import type { Plan } from "../db/schema";
import { brainVersions } from "../db/schema";
import { notFound } from "../lib/errors";
import { diffText } from "./diff";
import { type DocKind, findDocument, writeDocument } from "./documents";
import { LABEL } from "./limits";

export type VersionRow = typeof brainVersions.$inferSelect;

export const publicVersion = (v: VersionRow) => ({
  ...snakeRow(v, ["version", "author", "sessionId", "truncated", "note"]),
  chars: v.content.length,
  created_at: v.createdAt,
});

/** A document never written has no versions yet (GET on it answers version 0 and empty text): an empty list, not 404. */
export async function listVersions(db: Db, userId: string, kind: DocKind, site: string | null, page: { limit: number; before?: number }) {
  const doc = await findDocument(db, userId, kind, site);
  if (!doc) return { current: 0, versions: [], next_before: null };
  const rows = await db
    .select()
    .from(brainVersions)
    .where(and(eq(brainVersions.documentId, doc.id), eq(brainVersions.userId, userId), page.before ? lt(brainVersions.version, page.before) : undefined))
    .orderBy(desc(brainVersions.version))
    .limit(page.limit)
    .all();
  return { current: doc.version, versions: rows, next_before: rows.length === page.limit ? (rows.at(-1)?.version ?? null) : null };
}

export async function getVersion(db: Db, userId: string, kind: DocKind, site: string | null, version: number): Promise<VersionRow> {
  const doc = await findDocument(db, userId, kind, site);
  if (!doc) throw notFound(`${LABEL[kind]} version ${version}`);
  const row = await db
    .select()
    .from(brainVersions)
    .where(and(eq(brainVersions.documentId, doc.id), eq(brainVersions.userId, userId), eq(brainVersions.version, version)))
    .get();
  if (!row) throw notFound(`${LABEL[kind]} version ${version}`);
  return row;
}

/** Unified diff from one version to another (`to` defaults to the current version). */
export async function diffVersions(db: Db, userId: string, kind: DocKind, site: string | null, from: number, to?: number) {
  const doc = await findDocument(db, userId, kind, site);
  const target = to ?? doc?.version ?? 0;
  const [a, b] = await Promise.all([getVersion(db, userId, kind, site, from), getVersion(db, userId, kind, site, target)]);
  return { from, to: target, ...diffText(a.content, b.content, `${LABEL[kind]} v${from}`, `${LABEL[kind]} v${target}`) };
}

export type RollbackInput = { userId: string; plan: Plan; kind: DocKind; site: string | null; version: number; expectedVersion?: number };

/** Restores an old version's text as a new version, through the same checks as any write. */
export async function rollback(db: Db, input: RollbackInput) {
  const old = await getVersion(db, input.userId, input.kind, input.site, input.version);
  return writeDocument(db, {
    userId: input.userId,
    plan: input.plan,
    kind: input.kind,
    site: input.site,
    content: old.content,
    author: "user",
    sessionId: null,
    expectedVersion: input.expectedVersion,
    note: `rollback to version ${input.version}`,
  });
}
