/**
 * The facts full-text index stores every word tagged with its owner (src/db/fts-tag.ts): these tests pin what that
 * must not change (every word findable whatever punctuation surrounds it, one user's facts never in another's
 * results even when two users share a tag, edits and erasure leave no stale entry), that the re-index works on
 * existing facts, and that the migrations hold the tagging expression written once in TypeScript.
 */
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { migrationSql, taggedText } from "../src/db/fts-tag";
import { api, createUser, ftsIndexHolds, migrationQueries, OLD_OWNER_COLUMNS, PUNCTUATED, runSql } from "./helpers";
import { importFacts, search } from "./memory-helpers";
import { runOnAllShards, shardOf, userD1 } from "./shard-helpers";

const TIMEOUT = 60_000;

const ids = async (key: string, q: string) => (await search(key, q, "&mode=fulltext&k=25")).results.map((r) => r.id);

/** FTS5's own check that the index holds exactly what its content (the tagged view) says. */
const integrityCheck = () => runOnAllShards("INSERT INTO facts_fts(facts_fts, rank) VALUES ('integrity-check', 1)");

describe("facts full-text index (words tagged by owner)", () => {
  it(
    "finds every word of a fact written through the API, whatever punctuation surrounds it",
    async () => {
      const u = await createUser();
      const [fact] = (await importFacts(u.key, [{ text: PUNCTUATED.text }])).facts;
      for (const q of PUNCTUATED.words) {
        expect(await ids(u.key, q), q).toEqual([fact?.id]);
      }
      await integrityCheck();
    },
    TIMEOUT,
  );

  it(
    "never returns another user's facts with the same words, even when the two ids give the same tag",
    async () => {
      const a = await createUser();
      // All on one shard, where a's searches run: the tag is what keeps them apart there.
      const b = await createUser("free", await shardOf(a.id));
      // The tag comes from the id's characters 5-10: this user's id shares them with a's.
      const twin = `usr_${a.id.slice(4, 10)}twin${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}`;
      await (await userD1(b.id)).prepare("INSERT INTO users (id) VALUES (?)").bind(twin).run();
      await (await userD1(b.id))
        .prepare("INSERT INTO facts (id, user_id, text) VALUES (?, ?, ?)")
        .bind(crypto.randomUUID(), twin, "The twin's kvothe codeword, and shared words")
        .run();
      await importFacts(b.key, [{ text: "B's own shared words about kvothe" }]);
      const [own] = (await importFacts(a.key, [{ text: "A's own shared words" }])).facts;
      expect(await ids(a.key, "kvothe")).toEqual([]);
      expect(await ids(a.key, "shared words")).toEqual([own?.id]);
      expect(await ids(b.key, "kvothe")).toHaveLength(1);
      await integrityCheck();
    },
    TIMEOUT,
  );

  it(
    "keeps the index in step with an edited, a deleted and an erased fact, leaving no trace of erased words",
    async () => {
      const u = await createUser();
      const keep = await createUser();
      const written = (await importFacts(u.key, [{ text: "Deploys zqxwvplumb on Fridays" }, { text: "Visits qzyxmarrow in spring" }])).facts;
      await importFacts(keep.key, [{ text: "Keeps kvothefrond safe" }]);
      const [edited, other] = written;
      await (await userD1(u.id)).prepare("UPDATE facts SET text = 'Deploys plumbline on Fridays' WHERE id = ?").bind(edited?.id).run();
      expect(await ids(u.key, "zqxwvplumb")).toEqual([]);
      expect(await ids(u.key, "plumbline")).toEqual([edited?.id]);
      expect(await ftsIndexHolds("facts_fts", "zqxwvplumb")).toBe(false);
      await integrityCheck();
      expect((await api(u.key, "DELETE", `/v1/memory/facts/${edited?.id}`)).status).toBe(200);
      expect(await ids(u.key, "plumbline")).toEqual([]);
      expect(await ftsIndexHolds("facts_fts", "plumbline")).toBe(false);
      expect(await ids(u.key, "qzyxmarrow")).toEqual([other?.id]);
      expect((await api(u.key, "DELETE", "/v1/memory")).status).toBe(200);
      expect(await ftsIndexHolds("facts_fts", "qzyxmarrow")).toBe(false);
      expect(await ftsIndexHolds("facts_fts", "kvothefrond")).toBe(true);
      expect(await ids(keep.key, "kvothefrond")).toHaveLength(1);
      await integrityCheck();
    },
    TIMEOUT,
  );

  it(
    "a question's function words do not match the different short words the tag makes indistinguishable",
    async () => {
      const u = await createUser();
      // Tagged, "is" is indexed as "i" and "as" as "a": the fill list (every word of the question) must not let
      // the question's "I" or "a" bring back a fact that shares neither.
      await importFacts(u.key, [{ text: "Marta is a nurse as of June" }]);
      expect(await ids(u.key, "what do I grow")).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "re-indexes facts stored before the tagged index (the migration's backfill)",
    async () => {
      // Back to the index as it was before (an owner-token column), with facts written through it.
      await runSql(["DROP TRIGGER facts_ai", "DROP TRIGGER facts_ad", "DROP TRIGGER facts_au", "DROP TABLE facts_fts", "DROP VIEW facts_search"]);
      await runSql(OLD_OWNER_COLUMNS);
      await runSql(migrationQueries("0005_").filter((q) => !q.includes("DROP ")));
      await runSql(["INSERT INTO facts_fts(facts_fts, rank) VALUES ('secure-delete', 1)"]);
      const a = await createUser();
      const b = await createUser();
      const [fa] = (await importFacts(a.key, [{ text: "Pinned the wrangler version at work" }])).facts;
      const [fb] = (await importFacts(b.key, [{ text: "B also pins wrangler" }])).facts;
      await runSql(migrationQueries("0015_"));
      await runSql(migrationQueries("0016_"));
      expect(await ids(a.key, "wrangler")).toEqual([fa?.id]);
      expect(await ids(b.key, "wrangler")).toEqual([fb?.id]);
      await integrityCheck();
      const secure = await env.DB.prepare("SELECT v FROM facts_fts_config WHERE k = 'secure-delete'").first<{ v: number }>();
      expect(secure?.v).toBe(1);
    },
    TIMEOUT,
  );

  it("the migrations' view and triggers hold the tagging expression the searches use, verbatim", () => {
    const tagged = (table: string, column: string) => migrationSql(taggedText(sql.raw(`${table}.\`${column}\``), sql.raw(`${table}.\`user_id\``)));
    const facts = migrationQueries("0015_").join("\n");
    // Compared as booleans: a failure message quoting two 3 kB expressions helps nobody.
    for (const t of ["f", "old"]) expect(facts.includes(tagged(t, "text")), `0015 ${t}.text`).toBe(true);
    const lessons = migrationQueries("0013_").join("\n");
    for (const t of ["l", "old"]) for (const c of ["title", "content", "tags"]) expect(lessons.includes(tagged(t, c)), `0013 ${t}.${c}`).toBe(true);
  });
});
