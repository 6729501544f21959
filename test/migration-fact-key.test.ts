/**
 * Migration 0021: `facts.slot` becomes `facts.key`; the regex slots it held are set to NULL (a word list's guesses,
 * not keys anyone named), and what they had superseded stays history.
 */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { createUser, migrationQueries, runSql } from "./helpers";
import { getJson, importFacts } from "./memory-helpers";
import { userD1 } from "./shard-helpers";

type Fact = { id: string; text: string; key: string | null; superseded_by: string | null };

it("renames slot to key, forgets the regex slots, keeps their history, and supersedes by key afterwards", { timeout: 60_000 }, async () => {
  const u = await createUser();
  const [berlin, paris] = (
    await importFacts(u.key, [
      { text: "User lives in Berlin", metadata: { date: "2023-01-01" } },
      { text: "User moved to Paris", metadata: { date: "2024-01-01" } },
    ])
  ).facts;
  // Back to the schema before 0021, with what the regex wrote then: both slotted, Berlin replaced by Paris.
  await runSql(["DROP INDEX facts_key", "ALTER TABLE facts RENAME COLUMN key TO slot"]);
  await runSql(["CREATE INDEX facts_slot ON facts (user_id, slot)"]);
  await (await userD1(u.id)).prepare("UPDATE facts SET slot = 'user|live_in' WHERE user_id = ?").bind(u.id).run();
  await (await userD1(u.id)).prepare("UPDATE facts SET superseded_by = ? WHERE id = ?").bind(paris?.id, berlin?.id).run();

  await runSql(migrationQueries("0021_"));

  const rows = await (await userD1(u.id)).prepare("SELECT id, key, superseded_by FROM facts WHERE user_id = ? ORDER BY event_at").bind(u.id).all();
  expect(rows.results).toEqual([
    { id: berlin?.id, key: null, superseded_by: paris?.id },
    { id: paris?.id, key: null, superseded_by: null },
  ]);
  const indexes = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'facts' AND name LIKE 'facts_%'").all<{
    name: string;
  }>();
  expect(indexes.results.map((r) => r.name)).toEqual(expect.arrayContaining(["facts_key"]));
  expect(indexes.results.map((r) => r.name)).not.toContain("facts_slot");

  // A keyless restatement of the old regex pair supersedes nothing now; a key does.
  expect((await importFacts(u.key, [{ text: "User moved to Rome" }])).superseded).toEqual([]);
  const keyed = await importFacts(u.key, [{ text: "User lives in Rome", key: "user.home_city" }]);
  expect(keyed.superseded).toEqual([]);
  const later = await importFacts(u.key, [{ text: "User lives in Madrid", key: "user.home_city" }]);
  expect(later.superseded).toEqual([keyed.facts[0]?.id]);
  const live = (await getJson<{ facts: Fact[] }>(u.key, "/v1/memory/facts")).facts.map((f) => f.text).sort();
  expect(live).toEqual(["User lives in Madrid", "User moved to Paris", "User moved to Rome"]);
});
