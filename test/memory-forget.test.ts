import { describe, expect, it } from "vitest";
import { importFacts as importInto } from "../src/memory/facts";
import { localEmbedder } from "../src/memory/offline-embed";
import { sweepMemory } from "../src/memory/sweep";
import { count } from "./fault-helpers";
import { api, chat, createUser, ftsIndexHolds, migrationQueries, runSql, script, textReply } from "./helpers";
import { captured, consolidation, deliver, getJson, importFacts, observe, search } from "./memory-helpers";
import { runOnAllShards, shardOf, userD1 } from "./shard-helpers";

type FactBody = { id: string; text: string; superseded_by: string | null };
type OneFact = { fact: FactBody; replaced: FactBody[]; replaced_by: FactBody | null };

/** Every fact the user can list, history included. */
const stored = async (key: string) => (await getJson<{ facts: FactBody[] }>(key, "/v1/memory/facts?include_superseded=true")).facts.map((f) => f.text).sort();

const texts = (r: { results: { text: string }[] }) => r.results.map((x) => x.text);

/** Where the user lived, each statement replacing the one before (one key): Berlin, then Paris, then Lyon. Returns their ids in that order. */
async function moves(key: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [city, date] of [
    ["Berlin", "2023-01-01"],
    ["Paris", "2024-01-01"],
    ["Lyon", "2025-01-01"],
  ]) {
    ids.push((await importFacts(key, [{ text: `I live in ${city}`, key: "user.home_city", metadata: { date } }])).facts[0]?.id ?? "");
  }
  return ids;
}

async function forget(key: string, id: string) {
  const res = await api(key, "DELETE", `/v1/memory/facts/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { ok: true; forgotten: string[] };
}

describe("forgetting a fact forgets the history it had replaced", () => {
  it("forgetting the current statement forgets the older ones it replaced: no hidden copy is left, and none comes back as current", async () => {
    // Rows of one user naming another's: only possible between users of one shard, where both are put.
    const a = await createUser();
    const b = await createUser("free", await shardOf(a.id));
    const [berlin, paris, lyon] = await moves(a.key);
    await importFacts(a.key, [{ text: "I play the cello" }]);
    await moves(b.key);

    // Before: the history is the user's to see, as replaced statements.
    expect(await stored(a.key)).toEqual(["I live in Berlin", "I live in Lyon", "I live in Paris", "I play the cello"]);
    expect((await getJson<OneFact>(a.key, `/v1/memory/facts/${lyon}`)).replaced.map((f) => f.id)).toEqual([paris]);
    expect(texts(await search(a.key, "Where did I live before?", "&history=true"))).toContain("I live in Paris");
    // Another user's row that names this fact as its replacer (not writable through the API) must not be reached.
    await (await userD1(a.id))
      .prepare("INSERT INTO facts (id, user_id, text, superseded_by) VALUES (?, ?, ?, ?)")
      .bind(crypto.randomUUID(), b.id, "I live in Oslo", lyon)
      .run();

    const out = await forget(a.key, lyon ?? "");

    expect(await stored(a.key)).toEqual(["I play the cello"]);
    for (const id of [berlin, paris, lyon]) expect((await api(a.key, "GET", `/v1/memory/facts/${id}`)).status).toBe(404);
    for (const [q, extra] of [
      ["Where did I live before?", "&history=true"],
      ["Where do I live now?", ""],
      ["live Berlin Paris", "&history=true"],
    ]) {
      expect(texts(await search(a.key, q ?? "", extra))).toEqual(expect.not.arrayContaining([expect.stringMatching(/^I live in/)]));
    }
    // The answer names everything forgotten, this fact first.
    expect(out.forgotten[0]).toBe(lyon);
    expect([...out.forgotten].sort()).toEqual([berlin, paris, lyon].sort());
    // Stating a city again starts a new history.
    expect((await importFacts(a.key, [{ text: "I live in Rome" }])).superseded).toEqual([]);

    // The other user's facts, history included, are untouched.
    expect(await stored(b.key)).toEqual(["I live in Berlin", "I live in Lyon", "I live in Oslo", "I live in Paris"]);
  });

  it("forgetting a replaced statement keeps what replaced it and forgets the older ones below it", async () => {
    const u = await createUser();
    const [berlin, paris, lyon] = await moves(u.key);

    const out = await forget(u.key, paris ?? "");

    expect(await stored(u.key)).toEqual(["I live in Lyon"]);
    const current = await getJson<OneFact>(u.key, `/v1/memory/facts/${lyon}`);
    expect(current.fact.superseded_by).toBeNull();
    expect(current.replaced).toEqual([]);
    expect(texts(await search(u.key, "Where do I live now?"))[0]).toBe("I live in Lyon");
    expect(texts(await search(u.key, "Where did I live before?"))).not.toContain("I live in Berlin");
    expect(out.forgotten).toEqual([paris, berlin]);
  });

  it("deleting a connection forgets what its facts had replaced outside it, and counts it", async () => {
    const u = await createUser();
    const [ops] = (await importFacts(u.key, [{ text: "The default Jira project is OPS" }])).facts;
    const conn = (await (await api(u.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    // The consolidation model judged the connection's fact to replace the user-level one.
    const { sent } = await observe(u.id, [{ content: "Our Jira default is PROJ now" }]);
    await script(
      u.id,
      consolidation({
        updated_scaffold: {},
        updated_working_memory: "",
        facts_to_embed: [{ text: "The default Jira project is PROJ", connection_id: conn.id, supersedes: [ops?.id] }],
      }),
    );
    await deliver(sent);
    expect((await getJson<OneFact>(u.key, `/v1/memory/facts/${ops?.id}`)).replaced_by?.text).toBe("The default Jira project is PROJ");

    const res = await api(u.key, "DELETE", `/v1/connections/${conn.id}`);
    expect(await stored(u.key)).toEqual([]);
    expect(await res.json()).toEqual({ ok: true, facts_deleted: 2 });
  });
});

describe("forgetting a fact while it is being indexed", () => {
  it("leaves no vector of it: the sweep that was embedding it drops the vector it wrote after the forget", async () => {
    const u = await createUser();
    const text = "User's PIN hint is the cat's name";
    // Stored while the embedder was down: the sweep indexes it later.
    const down = { ...localEmbedder, embed: () => Promise.reject(new Error("embedder down")) };
    const [fact] = (await importInto((await captured(u.id, { embedder: down })).deps, u.id, [{ text }])).facts;
    // The user forgets it while the sweep's embedder is working on it.
    let forgot = 0;
    const embedder = {
      ...localEmbedder,
      embed: async (texts: string[]) => {
        if (!forgot && texts.includes(text)) forgot = (await api(u.key, "DELETE", `/v1/memory/facts/${fact?.id}`)).status;
        return localEmbedder.embed(texts);
      },
    };
    await sweepMemory((await captured(u.id, { embedder })).deps, Date.now() + 120_000);
    expect(forgot).toBe(200);
    expect(await stored(u.key)).toEqual([]);
    expect(await count("SELECT count(*) n FROM local_vectors WHERE user_id = ?", u.id)).toBe(0);
    expect(await count("SELECT count(*) n FROM local_vector_postings WHERE user_id = ?", u.id)).toBe(0);
  });
});

describe("the history earlier forgets left behind (migration 0018)", () => {
  it("deletes every statement whose chain of replacements ends at a forgotten fact, the owner's own only, and nothing else", async () => {
    // Rows of one user naming another's: only possible between users of one shard, where both are put.
    const a = await createUser();
    const b = await createUser("free", await shardOf(a.id));
    // Fact ids are UUIDs: one per name used below.
    const ids = new Map<string, string>();
    const id = (name: string) => ids.get(name) ?? (ids.set(name, crypto.randomUUID()).get(name) as string);
    // [id, owner, text, what replaced it]; "gone-*" were forgotten when only their own row went. A made-up word in
    // a statement lets the full-text index be checked for it.
    const rows: [string, string, string, string | null][] = [
      // a: Rome had replaced Paris, which had replaced Berlin and Madrid; what replaced Rome was forgotten.
      [id("a-rome"), a.id, "I live in Rome, qorvax", id("gone-a")],
      [id("a-paris"), a.id, "I live in Paris, zindlux", id("a-rome")],
      [id("a-berlin"), a.id, "I live in Berlin, plomquk", id("a-paris")],
      [id("a-madrid"), a.id, "I live in Madrid, wubrantz", id("a-paris")],
      // a: a healthy history (Acme, then Globex, now Initech) and a current fact.
      [id("a-acme"), a.id, "I work at Acme, kelmoxt", id("a-globex")],
      [id("a-globex"), a.id, "I work at Globex, fjordux", id("a-initech")],
      [id("a-initech"), a.id, "I work at Initech", null],
      [id("a-cello"), a.id, "I play the cello", null],
      // b: its own forgotten history, and a healthy one.
      [id("b-polo"), b.id, "I drive a Polo, jexolp", id("gone-b")],
      [id("b-golf"), b.id, "I drive a Golf, vrankix", id("b-polo")],
      [id("b-cat"), b.id, "I have a cat", id("b-dog")],
      [id("b-dog"), b.id, "I have a dog", null],
      // b's rows naming a's facts (not writable through the API): a chain is followed within its owner only, and
      // one ending at an existing fact, whoever owns it, stays.
      [id("b-oslo"), b.id, "I live in Oslo", id("a-paris")],
      [id("b-hooli"), b.id, "I work at Hooli", id("a-initech")],
    ];
    const d1 = await userD1(a.id);
    const insert = d1.prepare("INSERT INTO facts (id, user_id, text, superseded_by) VALUES (?, ?, ?, ?)");
    await d1.batch(rows.map((r) => insert.bind(...r)));
    const orphaned = ["qorvax", "zindlux", "plomquk", "wubrantz", "jexolp", "vrankix"];
    const kept = ["kelmoxt", "fjordux"];
    for (const word of [...orphaned, ...kept]) expect(await ftsIndexHolds("facts_fts", word), word).toBe(true);

    await runSql(migrationQueries("0018_"));

    expect(await stored(a.key)).toEqual(["I play the cello", "I work at Acme, kelmoxt", "I work at Globex, fjordux", "I work at Initech"]);
    expect(await stored(b.key)).toEqual(["I have a cat", "I have a dog", "I live in Oslo", "I work at Hooli"]);
    // The full-text entries went with the rows; the healthy history is still indexed.
    for (const word of orphaned) expect(await ftsIndexHolds("facts_fts", word), word).toBe(false);
    for (const word of kept) expect(await ftsIndexHolds("facts_fts", word), word).toBe(true);
    await runOnAllShards("INSERT INTO facts_fts(facts_fts, rank) VALUES ('integrity-check', 1)");
    // What is left keeps its history.
    expect((await getJson<OneFact>(a.key, `/v1/memory/facts/${id("a-initech")}`)).replaced.map((f) => f.id)).toEqual([id("a-globex")]);
  });
});

describe("forgetting leaves no copy in the per-turn audit rows", () => {
  /** The context logs the user can read, as one text (they hold the system text each turn was shown). */
  const logs = async (key: string) => (await api(key, "GET", "/v1/memory/context-logs")).text();
  const logCount = async (key: string) => (await getJson<{ context_logs: unknown[] }>(key, "/v1/memory/context-logs")).context_logs.length;

  it("forgetting a fact deletes the audit rows of the turns that were shown it or what it replaced; other turns and other users keep theirs", async () => {
    const [u, other] = [await createUser(), await createUser()];
    await script(u.id, textReply("hello"), textReply("ok"), textReply("ok"));
    await chat(u.key, { message: "hello" });
    const [old] = (await importFacts(u.key, [{ text: "User's bank PIN is 1357", key: "user.bank_pin", metadata: { date: "2024-01-01" } }])).facts;
    await chat(u.key, { message: "What is my bank PIN?" });
    expect(await logs(u.key)).toContain("1357");
    const [pin] = (await importFacts(u.key, [{ text: "User's bank PIN is 4921", key: "user.bank_pin", metadata: { date: "2025-01-01" } }])).facts;
    expect((await getJson<OneFact>(u.key, `/v1/memory/facts/${pin?.id}`)).replaced.map((f) => f.id)).toEqual([old?.id]);
    await chat(u.key, { message: "What is my bank PIN?" });
    expect(await logs(u.key)).toContain("4921");
    expect(await logCount(u.key)).toBe(3);
    await importFacts(other.key, [{ text: "User's bank PIN is 4921" }]);
    await script(other.id, textReply("ok"));
    await chat(other.key, { message: "What is my bank PIN?" });

    expect((await forget(u.key, pin?.id ?? "")).forgotten).toEqual([pin?.id, old?.id]);
    const after = await logs(u.key);
    expect(after).not.toContain("4921");
    expect(after).not.toContain("1357");
    expect(await logCount(u.key)).toBe(1);
    expect(await logs(other.key)).toContain("4921");
  }, 60_000);

  it("deleting a connection deletes the audit rows of the turns that were shown its facts", async () => {
    const u = await createUser();
    const conn = (await (await api(u.key, "POST", "/v1/connections", { name: "Bank" })).json()) as { id: string };
    await importFacts(u.key, [{ text: "User's bank PIN is 4921", metadata: { connection_id: conn.id } }]);
    await script(u.id, textReply("ok"));
    await chat(u.key, { message: "What is my bank PIN?" });
    expect(await logs(u.key)).toContain("4921");

    expect((await api(u.key, "DELETE", `/v1/connections/${conn.id}`)).status).toBe(200);
    expect(await logs(u.key)).not.toContain("4921");
  }, 60_000);
});
