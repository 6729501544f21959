/**
 * The recall statement's text is what local D1 keeps its compiled form under: it must not vary with the user, the
 * words, the project or the clock (those are bound values), and its LIMITs are written in, since a bound LIMIT
 * makes SQLite recompile the statement whenever a new value is bound. Only a non-negative integer may be written in.
 */
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { type RecallInput, searchStatement } from "../src/lessons/recall";
import { api, createUser } from "./helpers";

const dialect = new SQLiteAsyncDialect();
const render = (input: RecallInput, now = 1_700_000_000_000) => {
  const statement = searchStatement(input, now);
  if (!statement) throw new Error("no statement");
  return dialect.sqlToQuery(statement);
};

describe("recall statement", () => {
  it("has the same text for any user, words, project and time, with its LIMITs written in", () => {
    const a = render({ userId: "usr_aaaaaaaaaaaaaaaaaaaa", query: "retry backoff", project: "api", limit: 5 });
    const b = render({ userId: "usr_zzzzzzzzzzzzzzzzzzzz", query: 'NEAR(mock "database") OR drizzle', project: null, limit: 5 }, 1_800_000_000_000);
    expect(b.sql).toBe(a.sql);
    expect(b.params).not.toEqual(a.params);
    expect(a.sql).not.toMatch(/LIMIT \?/);
    expect(a.sql).toMatch(/LIMIT 100\)/);
    expect(a.sql).toMatch(/LIMIT 5\)/);
    expect(render({ userId: "usr_aaaaaaaaaaaaaaaaaaaa", query: "retry", project: "api", limit: 7 }).sql).toMatch(/LIMIT 7\)/);
    // The fallback for a query without a searchable word (a literal substring match) writes its LIMIT in too.
    const literal = render({ userId: "usr_aaaaaaaaaaaaaaaaaaaa", query: "++", limit: 5 });
    expect(literal.sql).toContain("instr(");
    expect(literal.sql).not.toMatch(/LIMIT \?/);
  });

  it.each([-1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60])("refuses to write in limit %s", (limit) => {
    expect(() => searchStatement({ userId: "usr_aaaaaaaaaaaaaaaaaaaa", query: "retry", limit }, 0)).toThrow(RangeError);
  });

  it("returns at most the requested number of lessons, the best first, whatever limit is asked for", async () => {
    const u = await createUser();
    for (const [title, content] of [
      ["Retry with backoff", "Retry flaky calls with exponential backoff and jitter."],
      ["Backoff caps", "Cap the retry backoff so a retry storm cannot pile up."],
      ["Jitter", "Add jitter to every retry."],
    ]) {
      expect((await api(u.key, "POST", "/v1/lessons", { title, content })).status).toBe(201);
    }
    const ids = async (limit: number) => {
      const res = await api(u.key, "GET", `/v1/lessons?q=retry%20backoff%20jitter&limit=${limit}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { lessons: { id: string }[] }).lessons.map((l) => l.id);
    };
    const all = await ids(3);
    expect(all).toHaveLength(3);
    expect(await ids(1)).toEqual(all.slice(0, 1));
    expect(await ids(2)).toEqual(all.slice(0, 2));
    expect(await ids(200)).toEqual(all);
  }, 60_000);
});
