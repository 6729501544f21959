/**
 * Which id each archived row gets in the importing account (docs/account.md, "Ids"). A row the account already
 * holds keeps its id; any other gets one derived from the account and the source id (a second import of the same
 * archive derives the same ids, so it finds its rows and adds nothing). Projects, brain documents, sites and
 * transcripts are matched by what they are instead (name, kind and site, slug, Claude Code session), lessons by their
 * content (the id the lessons capability derives from it).
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { ContentId } from "../core/capability";
import type { Db } from "../db/client";
import { inJson } from "../db/in-json";
import { brainDocuments, projects, transcripts } from "../db/schema";
import { sha256Hex } from "../lib/hash";
import type { ArchiveTable, TableKind } from "./archive-kinds";

export type Rec = Record<string, unknown>;

/** A source id's id in the account `userId` when it is not held there: same prefix, hashed body. */
export async function deriveId(userId: string, sourceId: string): Promise<string> {
  const hex = await sha256Hex(`${userId}\u0000${sourceId}`);
  const prefix = /^([a-z]{2,8})_/.exec(sourceId)?.[1];
  if (prefix) return `${prefix}_${hex.slice(0, 32)}`;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const CHUNK = 2000;

/** Which of `ids` the user holds in `table`. */
export async function heldIds(db: Db, table: ArchiveTable, userId: string, ids: readonly string[]): Promise<Set<string>> {
  const held = new Set<string>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await db
      .select({ id: table.id })
      .from(table)
      .where(and(eq(table.userId, userId), inJson(table.id, ids.slice(i, i + CHUNK))))
      .all();
    for (const r of rows) held.add(String(r.id));
  }
  return held;
}

/** The user's rows of `table` by a natural key (few rows per user: projects, documents). */
async function byKey(db: Db, table: ArchiveTable, userId: string, key: SQL, where?: SQL): Promise<Map<string, string>> {
  const rows = await db
    .select({ id: table.id, key: sql<string>`${key}` })
    .from(table)
    .where(and(eq(table.userId, userId), where))
    .all();
  return new Map(rows.map((r) => [r.key, String(r.id)]));
}

const docKey = (kind: unknown, site: unknown) => `${kind}\u0000${site ?? ""}`;

/**
 * Source id -> id in the account, for one kind's records and the ids other records name (`named`). A natural
 * kind maps only its own records: a reference to one the archive does not hold comes out null. `contentId`: the
 * kind's ids derive from content (a capability says how: lessons).
 */
export async function resolveIds(
  db: Db,
  userId: string,
  k: TableKind,
  records: readonly Rec[],
  named: readonly string[],
  contentId?: ContentId,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (contentId) {
    for (const r of records) out.set(String(r.id), await contentId(userId, r));
    return out;
  }
  const own = async (id: string, match: string | undefined) => out.set(id, match ?? (await deriveId(userId, id)));
  switch (k.kind) {
    case "site":
      for (const r of records) out.set(String(r.id), String(r.id));
      return out;
    case "project": {
      const names = await byKey(db, projects, userId, sql`lower(${projects.name})`);
      for (const r of records) await own(String(r.id), names.get(String(r.name).toLowerCase()));
      return out;
    }
    case "brain_document": {
      const docs = await byKey(db, brainDocuments, userId, sql`${brainDocuments.kind} || char(0) || ${brainDocuments.site}`);
      for (const r of records) await own(String(r.id), docs.get(docKey(r.kind, r.site)));
      return out;
    }
    case "transcript": {
      const sessionIds = records.map((r) => String(r.session_id));
      const held = await byKey(db, transcripts, userId, sql`${transcripts.sessionId}`, inJson(transcripts.sessionId, sessionIds));
      for (const r of records) await own(String(r.id), held.get(String(r.session_id)));
      return out;
    }
  }
  const ids = [...new Set([...records.map((r) => String(r.id)), ...named])];
  const held = await heldIds(db, k.table, userId, ids);
  for (const id of ids) await own(id, held.has(id) ? id : undefined);
  return out;
}
