/**
 * `GET /v1/export`: everything engram holds for the user as one JSON Lines archive (docs/account.md), streamed.
 * The stream reads one page at a time when the client asks for more, so the Worker holds about one page whatever
 * the account's size. Pages are read in order, each its own query: a write made while the export runs may or may
 * not be in it (a row added to a table not yet read is; one added behind the reading point is not), and no row is
 * ever in it twice. Every record is `{kind, data}` (a row's own columns include `kind` in places); the trailer
 * counts the records, so a cut download is recognised.
 */
import { and, eq, gt } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { publicConsent, readConsent } from "../consent/settings";
import type { Db } from "../db/client";
import { users } from "../db/schema";
import type { StoredMessage } from "../sessions/history";
import { rowToRecord } from "./archive-codec";
import {
  ACCOUNT_COLUMNS,
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  SETTINGS_COLUMNS,
  SETTINGS_VERSION,
  TABLE_KINDS,
  type TableKind,
  TIERS_COLUMNS,
} from "./archive-kinds";

/** Rows per query, and messages per call to a session's object. */
export const EXPORT_PAGE = 500;
export const HISTORY_PAGE = 200;

export type ExportSource = {
  /** The user's shard: every user-owned row, the tiers and the settings. */
  db: Db;
  /** The directory: the account's identity (name, email, plan), which only it holds (src/db/shards.ts). */
  directory: Db;
  userId: string;
  now: number;
  /** A page of a session's stored conversation (its Durable Object). */
  history: (sessionId: string, afterSeq: number, limit: number) => Promise<StoredMessage[]>;
};

type Line = Record<string, unknown>;

const userRecord = async (db: Db, userId: string, columns: Record<string, SQLiteColumn>): Promise<Line> =>
  (await db.select(columns).from(users).where(eq(users.id, userId)).get()) ?? {};

async function* messagesOf(source: ExportSource, sessionId: string): AsyncGenerator<Line[]> {
  for (let after = 0; ; ) {
    const page = await source.history(sessionId, after, HISTORY_PAGE);
    if (page.length) yield page.map((m) => ({ kind: "message", data: { session_id: sessionId, ...m } }));
    const last = page.at(-1);
    if (!last || page.length < HISTORY_PAGE) return;
    after = last.seq;
  }
}

async function* rowsOf(source: ExportSource, k: TableKind): AsyncGenerator<Line[]> {
  const { db, userId } = source;
  for (let after = ""; ; ) {
    const rows = (await db
      .select()
      .from(k.table)
      .where(and(eq(k.table.userId, userId), gt(k.table.id, after)))
      .orderBy(k.table.id)
      .limit(EXPORT_PAGE)
      .all()) as Record<string, unknown>[];
    if (k.kind !== "session") yield rows.map((row) => ({ kind: k.kind, data: rowToRecord(k.table, row) }));
    // A session's messages follow its row.
    else
      for (const row of rows) {
        yield [{ kind: k.kind, data: rowToRecord(k.table, row) }];
        yield* messagesOf(source, String(row.id));
      }
    const last = rows.at(-1);
    if (!last || rows.length < EXPORT_PAGE) return;
    after = String(last.id);
  }
}

/** The archive's lines, grouped as they are read (one group per query). */
export async function* archiveLines(source: ExportSource): AsyncGenerator<Line[]> {
  const { db, directory, userId } = source;
  yield [{ format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, exported_at: source.now }];
  yield [{ kind: "account", data: await userRecord(directory, userId, ACCOUNT_COLUMNS) }];
  const memory = publicConsent(await readConsent(db, userId));
  yield [{ kind: "settings", data: { version: SETTINGS_VERSION, ...(await userRecord(db, userId, SETTINGS_COLUMNS)), memory } }];
  yield [{ kind: "tiers", data: await userRecord(db, userId, TIERS_COLUMNS) }];
  for (const k of TABLE_KINDS) yield* rowsOf(source, k);
}

/** The archive as a byte stream: each pull reads the next group, so memory holds one page at a time. */
export function exportStream(source: ExportSource): ReadableStream<Uint8Array> {
  const lines = archiveLines(source);
  const encoder = new TextEncoder();
  let records = 0;
  let ended = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (ended) return controller.close();
      const next = await lines.next();
      if (next.done) {
        ended = true;
        controller.enqueue(encoder.encode(`${JSON.stringify({ kind: "end", data: { records } })}\n`));
        return;
      }
      // The header is not a record; every other line is.
      records += next.value.filter((l) => "kind" in l).length;
      controller.enqueue(encoder.encode(next.value.map((l) => `${JSON.stringify(l)}\n`).join("")));
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
}
