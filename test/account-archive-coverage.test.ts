/**
 * Every user-owned table and every column of the user row is either in the account archive or left out with a
 * reason (src/account/archive-kinds.ts): a table or setting added later fails here until it is placed.
 */
import { getTableColumns, getTableName, is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { ACCOUNT_COLUMNS, SETTINGS_COLUMNS, TABLE_KINDS, TABLES_LEFT_OUT, TIERS_COLUMNS, USER_COLUMNS_LEFT_OUT } from "../src/account/archive-kinds";
import * as schema from "../src/db/schema";

const tables = Object.values(schema as Record<string, unknown>).filter((t): t is SQLiteTable => is(t, SQLiteTable));
const userOwned = tables.filter((t) => Object.values(getTableColumns(t)).some((c) => c.name === "user_id")).map((t) => getTableName(t));

describe("account archive coverage", () => {
  it("places every user-owned table: exported, or left out with a reason", () => {
    const exported = TABLE_KINDS.map((k) => getTableName(k.table));
    const unplaced = userOwned.filter((t) => !exported.includes(t) && !(t in TABLES_LEFT_OUT));
    expect(unplaced, "add the table to TABLE_KINDS or TABLES_LEFT_OUT in src/account/archive-kinds.ts").toEqual([]);
    // Nothing is both, and nothing listed is gone from the schema.
    expect(exported.filter((t) => t in TABLES_LEFT_OUT)).toEqual([]);
    expect(Object.keys(TABLES_LEFT_OUT).filter((t) => !userOwned.includes(t))).toEqual([]);
    for (const reason of Object.values(TABLES_LEFT_OUT)) expect(reason.length).toBeGreaterThan(10);
  });

  it("places every column of the user row: tiers, settings, account, or left out with a reason", () => {
    const placed = [TIERS_COLUMNS, SETTINGS_COLUMNS, ACCOUNT_COLUMNS].flatMap((cols) => Object.values(cols).map((c) => c.name));
    const columns = Object.values(getTableColumns(schema.users)).map((c) => c.name);
    expect(
      columns.filter((c) => !placed.includes(c) && !(c in USER_COLUMNS_LEFT_OUT)),
      "add the column to SETTINGS_COLUMNS (and step SETTINGS_VERSION) or another list in src/account/archive-kinds.ts",
    ).toEqual([]);
    // A record's field is its column's name.
    for (const cols of [TIERS_COLUMNS, SETTINGS_COLUMNS, ACCOUNT_COLUMNS]) for (const [field, col] of Object.entries(cols)) expect(field).toBe(col.name);
  });
});
