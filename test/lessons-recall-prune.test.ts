/**
 * Exact pruning must not change what a recall returns: on a generated store (the recall bench's dense corpus,
 * 10,000 lessons for the user asking and 2,000 for another), every bench query x project gives the same lessons,
 * scores and tiers, in the same order, with pruning and without. The corpus has thousands of tied BM25 scores,
 * so the tie-breaking at the 100th match is exercised too.
 */
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { corpusDraw, corpusQueries, lessonsOf } from "../bench/lessons-corpus-data";
import { createDb } from "../src/db/client";
import { userMatch } from "../src/db/fts-tag";
import { type RecallInput, recallTerms, searchLessons, searchStatement } from "../src/lessons/recall";
import { createUser } from "./helpers";

async function seed(userId: string, lessons: ReturnType<typeof lessonsOf>, prefix: string) {
  for (let i = 0; i < lessons.length; i += 1000) {
    const rows = lessons.slice(i, i + 1000).map((l) => ({ ...l, id: `${prefix}${l.id}`, tags: JSON.stringify(l.tags) }));
    await env.DB.prepare(
      `INSERT INTO lessons (id, user_id, type, signal, title, content, tags, project, created_at)
       SELECT json_extract(value, '$.id'), ?, json_extract(value, '$.type'), json_extract(value, '$.signal'), json_extract(value, '$.title'),
         json_extract(value, '$.content'), json_extract(value, '$.tags'), json_extract(value, '$.project'), ? - (key * 60000) FROM json_each(?)`,
    )
      .bind(userId, 1_790_000_000_000, JSON.stringify(rows))
      .run();
  }
}

describe("recall pruning", () => {
  it("returns exactly what scoring every match returns, for every bench query and project", async () => {
    const draw = corpusDraw("dense");
    const u = await createUser();
    const other = await createUser();
    await seed(u.id, lessonsOf("dense", 3, draw), "p");
    await seed(other.id, lessonsOf("dense", 4, draw).slice(0, 2000), "q");
    const db = createDb(env.DB);
    const now = 1_800_000_000_000;
    let compared = 0;
    let prunable = 0;
    for (const query of corpusQueries("dense", draw)) {
      for (const project of [null, "proj-1", "proj-3"]) {
        for (const type of [undefined, "lesson" as const]) {
          const input: RecallInput = { userId: u.id, query, project, type, limit: 5 };
          const full = await searchLessons(db, input, now, { prune: false });
          const pruned = await searchLessons(db, input, now, { prune: true });
          expect(pruned, `${query} / ${project} / ${type}`).toEqual(full);
          expect(full.length).toBeGreaterThan(0);
          compared++;
        }
      }
      // Pruning only engages when every word is common (see recall-prune.ts): count the queries that reach it.
      const counts = await Promise.all(
        recallTerms(query).map(
          async (w) => (await db.all<{ n: number }>(sql`SELECT count(*) AS n FROM lessons_fts WHERE lessons_fts MATCH ${userMatch(u.id, [w])}`))[0]?.n ?? 0,
        ),
      );
      if (counts.every((n) => n >= 250)) prunable++;
    }
    expect(compared).toBe(360);
    expect(prunable).toBeGreaterThanOrEqual(10);
  }, 600_000);

  it("keeps one statement text per kind of query (words bound, only integers written in)", () => {
    const dialect = new SQLiteAsyncDialect();
    const text = (query: string, userId = "usr_aaaaaaaaaaaaaaaaaaaa") =>
      dialect.sqlToQuery(searchStatement({ userId, query, limit: 5 }, 0, { prune: true }) ?? sql``).sql;
    const two = text("retry backoff");
    expect(text('NEAR(mock "database") OR drizzle', "usr_zzzzzzzzzzzzzzzzzzzz")).toBe(two);
    expect(text("retry backoff jitter timeout cache")).toBe(two);
    expect(two).toContain("pairs");
    // One word, or more than five, is scored unpruned: the plain statement.
    expect(text("retry")).not.toContain("pairs");
    expect(text("alpha beta gamma delta epsilon zeta")).toBe(text("retry"));
    // Off by default: the recall statement is the unpruned one.
    expect(dialect.sqlToQuery(searchStatement({ userId: "usr_aaaaaaaaaaaaaaaaaaaa", query: "retry backoff", limit: 5 }, 0) ?? sql``).sql).not.toContain(
      "pairs",
    );
  });
});
