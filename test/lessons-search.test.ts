/**
 * The lessons full-text index stores every word tagged with its owner: these tests pin what that must not change
 * (every word findable whatever punctuation surrounds it, one user's lessons never in another's results even when
 * two users share a tag, erasure leaves nothing in the index) and that the re-index works on existing lessons.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser, ftsIndexHolds, migrationQueries, OLD_OWNER_COLUMNS, PUNCTUATED, runSql } from "./helpers";
import { runOnAllShards, userD1 } from "./shard-helpers";

type Hit = { id: string };

const remember = async (key: string, body: Record<string, unknown>) => {
  const res = await api(key, "POST", "/v1/lessons", body);
  expect(res.status).toBe(201);
  return ((await res.json()) as { lesson: Hit }).lesson;
};

const search = async (key: string, q: string) => {
  const res = await api(key, "GET", `/v1/lessons?q=${encodeURIComponent(q)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { lessons: Hit[] }).lessons.map((l) => l.id);
};

/** FTS5's own check that the index holds exactly what the content (the tagged view) says. */
const integrityCheck = () => runOnAllShards("INSERT INTO lessons_fts(lessons_fts, rank) VALUES ('integrity-check', 1)");

describe("lessons full-text index", () => {
  it("finds every word whatever punctuation surrounds it, in title, content and tags", async () => {
    const u = await createUser();
    const l = await remember(u.key, {
      title: "Spacing—matters (punctuation)",
      content: `${PUNCTUATED.text}\n\tIndented line, trailing`,
      tags: ["workspaces", "lockfile-v9"],
    });
    for (const q of [...PUNCTUATED.words, "indented", "trailing", "workspaces", "lockfile", "v9", "spacing", "matters", "punctuation"]) {
      expect(await search(u.key, q), q).toEqual([l.id]);
    }
    await integrityCheck();
  });

  it("finds a lesson by a query with no searchable word, however long, whatever it is made of, and only the user's own", async () => {
    const u = await createUser();
    const other = await createUser();
    const emoji = await remember(u.key, { title: "Emoji rule 😀", content: `Keep ${"😀".repeat(20)} in the changelog headings.` });
    const arrows = await remember(u.key, { title: "Operators", content: "Document -> => >= <= != == === !== ?? ||= &&= ... :: ;; // in the style guide." });
    const percent = await remember(u.key, { title: "Literal wildcards", content: "A coverage of 100%_ means nothing here." });
    await remember(other.key, { title: "Someone else's emoji", content: `Also ${"😀".repeat(20)} here.` });
    expect(await search(u.key, "😀".repeat(13))).toEqual([emoji.id]);
    expect(await search(u.key, "-> => >= <= != == === !== ?? ||= &&= ... :: ;; //")).toEqual([arrows.id]);
    // What a LIKE pattern would read as wildcards is only text.
    expect(await search(u.key, "%_")).toEqual([percent.id]);
    expect(await search(u.key, "%%")).toEqual([]);
    // Longer than what is kept of it (200 characters): the first 200 still have to match.
    expect(await search(u.key, "😀".repeat(300))).toEqual([]);
  });

  it("leaves out the words common in the user's own lessons, in any language, unless the query has nothing else", async () => {
    const u = await createUser();
    const topics = ["la base", "le cache", "les logs", "le déploiement", "la revue", "les branches", "le linter", "la CI"];
    for (let i = 0; i < 24; i++) await remember(u.key, { title: `Règle ${i}`, content: `Pour ${topics[i % topics.length]}, voir la page ${i} du wiki.` });
    const tests = await remember(u.key, { title: "Lancer les tests", content: "Pour les tests, lancer pnpm test dans le dossier racine." });
    // "pour" and "la" are in more than 20 of the user's 25 lessons: only "tests" is searched.
    expect(await search(u.key, "pour la tests")).toEqual([tests.id]);
    // A query of common words only still searches them.
    expect((await search(u.key, "pour la")).length).toBeGreaterThan(1);
  });

  it("keeps users apart even when their ids give the same index tag", async () => {
    const a = await createUser();
    // The tag comes from the id's characters 5-10: this user's id shares them with a's.
    const twin = `usr_${a.id.slice(4, 10)}twin${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}`;
    await (await userD1(a.id)).prepare("INSERT INTO users (id) VALUES (?)").bind(twin).run();
    await (await userD1(a.id))
      .prepare("INSERT INTO lessons (id, user_id, type, title, content) VALUES (?, ?, 'lesson', ?, ?)")
      .bind("les_twin_1", twin, "Twin's private kvothe lesson", "Only the twin may recall kvothe and shared words.")
      .run();
    const own = await remember(a.key, { title: "A's own shared words lesson", content: "Shared words, but A's own." });
    expect(await search(a.key, "kvothe")).toEqual([]);
    expect(await search(a.key, "shared words")).toEqual([own.id]);
    await integrityCheck();
  });

  it("keeps the index in step with edits, unlearn and erasure, leaving no trace of erased words", async () => {
    const u = await createUser();
    const keep = await createUser();
    const l = await remember(u.key, { title: "The zqxwvplumb deploy lesson", content: "Deploy zqxwvplumb after the qzyxmarrow migration." });
    await remember(keep.key, { title: "The kvothefrond lesson", content: "Keep kvothefrond searchable." });
    await (await userD1(u.id)).prepare("UPDATE lessons SET title = 'The renamed plumbline lesson' WHERE id = ?").bind(l.id).run();
    expect(await search(u.key, "plumbline")).toEqual([l.id]);
    await integrityCheck();
    expect((await api(u.key, "DELETE", `/v1/lessons/${l.id}`)).status).toBe(200);
    expect(await search(u.key, "plumbline")).toEqual([]);
    expect(await ftsIndexHolds("lessons_fts", "qzyxmarrow")).toBe(true);
    expect((await api(u.key, "DELETE", "/v1/memory")).status).toBe(200);
    expect(await ftsIndexHolds("lessons_fts", "qzyxmarrow")).toBe(false);
    expect(await ftsIndexHolds("lessons_fts", "zqxwvplumb")).toBe(false);
    expect(await ftsIndexHolds("lessons_fts", "kvothefrond")).toBe(true);
    expect(await search(keep.key, "kvothefrond")).toHaveLength(1);
    await integrityCheck();
  });

  it("re-indexes lessons stored before the tagged index (the migration's backfill)", async () => {
    // Back to the index as it was before the re-index (owner-token column), with lessons written through it.
    await runSql(["DROP TRIGGER lessons_ai", "DROP TRIGGER lessons_ad", "DROP TRIGGER lessons_au", "DROP TABLE lessons_fts", "DROP VIEW lessons_search"]);
    await runSql(OLD_OWNER_COLUMNS);
    await runSql(migrationQueries("0011_"));
    await runSql(migrationQueries("0012_"));
    const a = await createUser();
    const b = await createUser();
    const la = await remember(a.key, { title: "Pin the wrangler version", content: "Wrangler 4.157 breaks npm ci; pin it." });
    const lb = await remember(b.key, { title: "Pin the wrangler version too", content: "B also pins wrangler." });
    await runSql(migrationQueries("0013_"));
    await runSql(migrationQueries("0016_"));
    expect(await search(a.key, "wrangler")).toEqual([la.id]);
    expect(await search(b.key, "wrangler")).toEqual([lb.id]);
    await integrityCheck();
    const secure = await env.DB.prepare("SELECT v FROM lessons_fts_config WHERE k = 'secure-delete'").first<{ v: number }>();
    expect(secure?.v).toBe(1);
  });
});
