/**
 * What moving a user to another shard copies (move.ts): every user-owned table the archive lists
 * (archive-kinds.ts, the source of truth for which tables hold a user's rows), in its order (a row's references
 * before it), then the tables the archive leaves out but a shard still holds for the user. A table added to the
 * archive's lists is moved without a change here; one left out of both lists below fails
 * test/shards-move.test.ts.
 */
import { getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { auditLogs, localVectorPostings, localVectors, memoryConsent, sessionErasures, users } from "../db/schema";
import { TABLE_KINDS } from "./archive-kinds";

/** Tables the archive leaves out that still move with the user, in an order their references allow. */
const MOVED_BESIDES_ARCHIVE: readonly SQLiteTable[] = [memoryConsent, sessionErasures, localVectors, localVectorPostings, auditLogs];

/** Tables holding a user's rows that a move does not copy, and why (each is in TABLES_LEFT_OUT too). */
export const NOT_MOVED: Readonly<Record<string, string>> = {
  api_keys: "the directory's: keys never live on a shard",
  chat_reservations: "budget held by turns running now: transient, deleted from the old shard with the rest",
};

export type MovedTable = { name: string; columns: readonly string[] };

const describe = (table: SQLiteTable): MovedTable => ({
  name: getTableName(table),
  columns: Object.values(getTableColumns(table)).map((c) => c.name),
});

/** The user-owned tables a move copies, parents first. */
export const MOVED_TABLES: readonly MovedTable[] = [...TABLE_KINDS.map((k) => k.table), ...MOVED_BESIDES_ARCHIVE].map(describe);

/**
 * The shard's own `users` columns (memory tiers, settings, the plan copy): what a move copies of the user row.
 * Identity (name, email) and the directory's columns (shard, moving_to) stay in the directory; `fence` is set by
 * the move itself.
 */
const DIRECTORY_ONLY = new Set(["name", "email", "shard", "moving_to", "fence"]);
export const USER_ROW: MovedTable = { name: "users", columns: describe(users).columns.filter((c) => !DIRECTORY_ONLY.has(c)) };

/** The tier columns a shard's user row holds, and their empty values: what the directory's row keeps when the user lives elsewhere. */
export const EMPTY_TIERS = { working_memory: "", scaffold: "{}", learned_info: "{}", scaffold_meta: "{}", review_mode: 0 } as const;
