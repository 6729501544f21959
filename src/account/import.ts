/**
 * `POST /v1/import`: an archive (this format version or older) into the caller's account, merged kind by kind
 * with the rules of archive-kinds.ts. Everything is checked first (import-parse.ts); the rows then go in with one
 * D1 batch, one transaction: an archive is imported whole or not at all. Each statement inserts many rows from one
 * JSON parameter (`json_each`), so the batch stays a few dozen statements whatever the archive's size; the size is
 * bounded by IMPORT_MAX_BYTES instead (413).
 *
 * Conversations live in the sessions' Durable Objects, outside the transaction: they are written first, into
 * objects of sessions no row names yet (invisible until the batch commits), and emptied again when the batch fails.
 */
import { count, eq, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { QuotaKind } from "../config/limits";
import { type Consent, MAX_SENSITIVE_RULES } from "../consent/settings";
import type { ContentId } from "../core/capability";
import { isConstraintError, returnedIds, runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { users } from "../db/schema";
import { AppError, describeFailure } from "../lib/errors";
import type { StoredMessage } from "../sessions/history";
import { recordColumns, storedValue } from "./archive-codec";
import { MESSAGE_RULE, SETTINGS_COLUMNS, TABLE_KINDS, type TableKind, TIERS_COLUMNS, TIERS_RULE } from "./archive-kinds";
import { heldIds, type Rec, resolveIds } from "./import-ids";
import { type ParsedArchive, parseArchive } from "./import-parse";

/** The largest archive an import takes (bytes): what one request and one transaction hold comfortably. */
export const IMPORT_MAX_BYTES = 16 * 1024 * 1024;

/** Bytes of rows per statement parameter (D1 takes strings up to 2 MB). */
const CHUNK_BYTES = 512 * 1024;
const MESSAGES_PER_CALL = 200;

export type HistoryMessage = Pick<StoredMessage, "role" | "content" | "created_at">;

export type ImportDeps = {
  db: Db;
  userId: string;
  now: number;
  /** Writes a new session's conversation into its object; `reset` first empties it. False: the object refused. */
  writeHistory: (sessionId: string, messages: HistoryMessage[], reset: boolean) => Promise<boolean>;
  /** Kinds whose ids derive from content, by kind (the registry's). */
  contentIds: ReadonlyMap<string, ContentId>;
  /** The caller's plan quotas. */
  quotas: Readonly<Partial<Record<QuotaKind, number>>>;
};

export type ImportReceipt = {
  format_version: number;
  imported: Record<string, number>;
  skipped: Record<string, number>;
  notes: string[];
  /** Imported live facts, indexed for vector search after the answer. */
  indexing: number;
};

/** The receipt, and the ids of the rows written per kind (for the capabilities' after-import work). */
export type ImportResult = { receipt: ImportReceipt; inserted: Record<string, string[]> };

type Maps = Map<string, Map<string, string>>;

const asList = (v: unknown): string[] => (v === null || v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);

/** A record as the row to insert: ids mapped, resets applied, values as SQLite stores them; absent fields stay absent (defaults). */
function toRow(k: TableKind, rec: Rec, maps: Maps): Record<string, string | number | null> {
  const out: Record<string, string | number | null> = {};
  for (const [name, col] of Object.entries(recordColumns(k.table))) {
    if (!(name in rec) && !(name in (k.reset ?? {}))) continue;
    let value: unknown = rec[name];
    const target = name === "id" ? k.kind : (k.refs?.[name] ?? (k.parent?.column === name ? k.parent.kind : undefined));
    if (target && value !== null && value !== undefined) {
      const map = maps.get(target);
      value = Array.isArray(value) ? value.flatMap((v) => map?.get(String(v)) ?? []) : (map?.get(String(value)) ?? null);
    }
    if (k.reset && name in k.reset) value = k.reset[name];
    out[name] = storedValue(col, value);
  }
  return out;
}

/**
 * `INSERT OR IGNORE ... SELECT ... FROM json_each(?)` statements for rows of one kind, grouped by the fields they
 * have and cut into parameters of CHUNK_BYTES. Column names come from the schema, never from the archive.
 */
function insertStatements(k: TableKind, rows: Record<string, unknown>[], userId: string, expr: Record<string, SQL> = {}, where?: SQL): SQL[] {
  const columns = recordColumns(k.table);
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const row of rows) {
    const key = Object.keys(row).join(",");
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  const out: SQL[] = [];
  for (const [key, group] of groups) {
    const names = key.split(",");
    const cols = names.map((n) => columns[n] as SQLiteColumn);
    const values = names.map((n) => expr[n] ?? sql.raw(`json_extract(value, '$.${n}')`));
    let chunk: Record<string, unknown>[] = [];
    let size = 0;
    const flush = () => {
      if (!chunk.length) return;
      out.push(
        sql`INSERT OR IGNORE INTO ${k.table} (user_id, ${sql.join(
          cols.map((c) => sql.identifier(c.name)),
          sql`, `,
        )}) SELECT ${userId}, ${sql.join(values, sql`, `)} FROM json_each(${JSON.stringify(chunk)}) WHERE ${where ?? sql`1`} RETURNING id`,
      );
      chunk = [];
      size = 0;
    };
    for (const row of group) {
      const bytes = JSON.stringify(row).length;
      if (size + bytes > CHUNK_BYTES) flush();
      chunk.push(row);
      size += bytes;
    }
    flush();
  }
  return out;
}

/**
 * Refuses the whole import when it would take the user past their plan's quota of this kind (every row counts,
 * unlearned lessons too). Read before the batch: a write racing the import can pass the cap by what it adds.
 */
async function checkQuota(deps: ImportDeps, k: TableKind, adding: number) {
  const limit = k.quota && deps.quotas[k.quota];
  if (limit === undefined || limit === null || !adding) return;
  const held = await deps.db.select({ n: count() }).from(k.table).where(eq(k.table.userId, deps.userId)).get();
  const total = (held?.n ?? 0) + adding;
  if (total > limit)
    throw new AppError("quota_exceeded", `the archive would bring your ${k.quota} to ${total}, over your plan's ${limit}: nothing was imported`);
}

/** Held rows whose `column` is empty take the archive's value (the rows themselves are not imported again). */
function refillStatement(
  k: TableKind,
  column: string,
  rows: readonly Rec[],
  map: Map<string, string> | undefined,
  held: Set<string> | undefined,
  userId: string,
): SQL {
  const col = recordColumns(k.table)[column] as SQLiteColumn;
  const values = rows.flatMap((r) => {
    const id = map?.get(String(r.id)) ?? "";
    return held?.has(id) && column in r ? [{ id, v: storedValue(col, r[column]) }] : [];
  });
  const name = sql.identifier(col.name);
  return sql`UPDATE ${k.table} SET ${name} = (SELECT json_extract(value, '$.v') FROM json_each(${JSON.stringify(values)}) WHERE json_extract(value, '$.id') = ${k.table.id})
    WHERE user_id = ${userId} AND ${name} = '{}' AND ${k.table.id} IN (SELECT json_extract(value, '$.id') FROM json_each(${JSON.stringify(values)}))`;
}

const set = (columns: Record<string, SQLiteColumn>, rec: Rec) =>
  Object.entries(columns).flatMap(([name, col]) => (name in rec ? [sql`${sql.identifier(col.name)} = ${storedValue(col, rec[name])}`] : []));

/** The ids each record of `archive` names, by the kind they name. */
function namedIds(archive: ParsedArchive): Map<string, string[]> {
  const named = new Map<string, string[]>();
  for (const k of TABLE_KINDS)
    for (const [column, target] of Object.entries(k.refs ?? {})) {
      const list = named.get(target) ?? [];
      named.set(target, list);
      for (const rec of archive.rows.get(k.kind) ?? []) list.push(...asList(rec[column]));
    }
  return named;
}

export async function importArchive(deps: ImportDeps, text: string): Promise<ImportResult> {
  const archive = parseArchive(text);
  const { db, userId } = deps;
  const named = namedIds(archive);
  const maps: Maps = new Map();
  const held = new Map<string, Set<string>>();
  for (const k of TABLE_KINDS) {
    const rows = archive.rows.get(k.kind) ?? [];
    const map = await resolveIds(db, userId, k, rows, named.get(k.kind) ?? [], deps.contentIds.get(k.kind));
    maps.set(k.kind, map);
    held.set(k.kind, k.exportOnly ? new Set() : await heldIds(db, k.table, userId, [...new Set(map.values())]));
  }
  const account = await db.select({ wm: users.workingMemory, scaffold: users.scaffold }).from(users).where(sql`${users.id} = ${userId}`).get();
  const tiersEmpty = account?.wm === "" && Object.keys(account?.scaffold ?? {}).length === 0;
  const takeTiers = archive.tiers !== null && tiersEmpty;
  const emptyTiers = sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND working_memory = '' AND scaffold = '{}')`;

  const steps: { kind?: string; statement: SQL }[] = [];
  const kept = new Map<string, Rec[]>();
  const total: Record<string, number> = {};
  for (const k of TABLE_KINDS) {
    const rows = archive.rows.get(k.kind) ?? [];
    total[k.kind] = rows.length;
    if (k.exportOnly || (k.kind === "revision" && !takeTiers)) continue;
    const map = maps.get(k.kind);
    const mine = held.get(k.kind);
    const parentMap = k.parent && maps.get(k.parent.kind);
    const parentHeld = k.parent && held.get(k.parent.kind);
    const seen = new Set<string>();
    const keep = rows.filter((r) => {
      const id = map?.get(String(r.id)) ?? "";
      // Two records the account matches to one row (two lessons of the same content) are one row.
      if (mine?.has(id) || seen.has(id)) return false;
      seen.add(id);
      return !k.parent || !parentHeld?.has(parentMap?.get(String(r[k.parent.column])) ?? "");
    });
    kept.set(k.kind, keep);
    await checkQuota(deps, k, keep.length);
    if (k.refill) steps.push({ statement: refillStatement(k, k.refill, rows, map, mine, userId) });
    if (k.kind === "revision") {
      // Renumbered after the account's latest revision, in their order (revision numbers only grow).
      const ordered = [...keep].sort((a, b) => Number(a.rev) - Number(b.rev));
      const rev = sql`(SELECT coalesce(max(rev), 0) FROM memory_runs WHERE user_id = ${userId}) + key + 1`;
      for (const s of insertStatements(
        k,
        ordered.map((r) => toRow(k, r, maps)),
        userId,
        { rev },
        emptyTiers,
      ))
        steps.push({ kind: k.kind, statement: s });
      continue;
    }
    for (const s of insertStatements(
      k,
      keep.map((r) => toRow(k, r, maps)),
      userId,
    ))
      steps.push({ kind: k.kind, statement: s });
  }
  const notes: string[] = [];
  if (takeTiers && archive.tiers) {
    const assignments = set(TIERS_COLUMNS, archive.tiers);
    if (assignments.length)
      steps.push({ statement: sql`UPDATE users SET ${sql.join(assignments, sql`, `)}, updated_at = ${deps.now} WHERE id = ${userId} AND ${emptyTiers}` });
  } else if (archive.tiers) notes.push(`tiers: the account's working memory and scaffold are kept (${TIERS_RULE})`);
  const settings = archive.settings ? set(SETTINGS_COLUMNS, archive.settings) : [];
  if (settings.length) steps.push({ statement: sql`UPDATE users SET ${sql.join(settings, sql`, `)}, updated_at = ${deps.now} WHERE id = ${userId}` });
  // What the assistant may remember replaces the account's, as every setting the archive holds does.
  const memory = archive.settings?.memory as { consent: Consent["modes"]; sensitive: Consent["sensitive"] } | undefined;
  if (memory) {
    const values = { modes: memory.consent, sensitive: memory.sensitive.slice(0, MAX_SENSITIVE_RULES) };
    steps.push({
      statement: sql`INSERT INTO memory_consent (user_id, modes, sensitive, updated_at)
        VALUES (${userId}, ${JSON.stringify(values.modes)}, ${JSON.stringify(values.sensitive)}, ${deps.now})
        ON CONFLICT (user_id) DO UPDATE SET modes = excluded.modes, sensitive = excluded.sensitive, updated_at = excluded.updated_at`,
    });
  }

  const written = await writeConversations(deps, archive, kept.get("session") ?? [], maps);
  let results: D1Result[];
  try {
    results = await runStatements(
      db,
      steps.map((s) => s.statement),
    );
  } catch (err) {
    await Promise.allSettled(written.map((w) => deps.writeHistory(w.id, [], true)));
    console.error(JSON.stringify({ import: "commit_failed", user: userId, error: describeFailure(err) }));
    if (isConstraintError(err)) throw new AppError("conflict", "the account changed while the archive was imported; nothing was imported: try again");
    throw err;
  }
  const inserted = new Map<string, Set<string>>();
  steps.forEach((s, i) => {
    if (s.kind) inserted.set(s.kind, new Set([...(inserted.get(s.kind) ?? []), ...returnedIds(results[i])]));
  });
  const imported: Record<string, number> = {};
  const skipped: Record<string, number> = {};
  for (const k of TABLE_KINDS) {
    const n = inserted.get(k.kind)?.size ?? 0;
    imported[k.kind] = n;
    skipped[k.kind] = (total[k.kind] ?? 0) - n;
    if (skipped[k.kind]) notes.push(`${k.kind}: ${skipped[k.kind]} not imported (${k.rule})`);
  }
  const messages = [...archive.messages.values()].reduce((n, m) => n + m.length, 0);
  imported.message = written.reduce((n, w) => n + w.messages, 0);
  skipped.message = messages - imported.message;
  if (skipped.message) notes.push(`message: ${skipped.message} not imported (${MESSAGE_RULE})`);
  const live = new Set((kept.get("fact") ?? []).flatMap((r) => (r.superseded_by ? [] : [maps.get("fact")?.get(String(r.id)) ?? ""])));
  const indexing = [...(inserted.get("fact") ?? [])].filter((id) => live.has(id)).length;
  const receipt = { format_version: archive.version, imported, skipped, notes, indexing };
  return { receipt, inserted: Object.fromEntries([...inserted].map(([kind, ids]) => [kind, [...ids]])) };
}

/** Writes the conversations of the sessions about to be imported; returns the (new) sessions written and their message counts. */
async function writeConversations(deps: ImportDeps, archive: ParsedArchive, sessions: readonly Rec[], maps: Maps) {
  const written: { id: string; messages: number }[] = [];
  try {
    for (const s of sessions) {
      const messages = [...(archive.messages.get(String(s.id)) ?? [])].sort((a, b) => Number(a.seq) - Number(b.seq));
      if (!messages.length) continue;
      const id = maps.get("session")?.get(String(s.id)) ?? "";
      written.push({ id, messages: messages.length });
      for (let i = 0; i < messages.length; i += MESSAGES_PER_CALL) {
        const page = messages.slice(i, i + MESSAGES_PER_CALL).map((m) => ({ role: m.role, content: m.content, created_at: m.created_at }) as HistoryMessage);
        if (!(await deps.writeHistory(id, page, i === 0)))
          throw new AppError("conflict", `session ${s.id} could not take its conversation: nothing was imported`);
      }
    }
  } catch (err) {
    await Promise.allSettled(written.map((w) => deps.writeHistory(w.id, [], true)));
    throw err;
  }
  return written;
}
