import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser, script } from "./helpers";
import { consolidation, deliver, getJson, importFacts, observe, search } from "./memory-helpers";

type FactBody = { id: string; text: string; superseded_by: string | null };
type OneFact = { fact: FactBody; replaced: FactBody[]; replaced_by: FactBody | null };

/** Every fact the user can list, history included. */
const stored = async (key: string) => (await getJson<{ facts: FactBody[] }>(key, "/v1/memory/facts?include_superseded=true")).facts.map((f) => f.text).sort();

const texts = (r: { results: { text: string }[] }) => r.results.map((x) => x.text);

/** Where the user lived, each statement replacing the one before: Berlin, then Paris, then Lyon. Returns their ids in that order. */
async function moves(key: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [city, date] of [
    ["Berlin", "2023-01-01"],
    ["Paris", "2024-01-01"],
    ["Lyon", "2025-01-01"],
  ]) {
    ids.push((await importFacts(key, [{ text: `I live in ${city}`, metadata: { date } }])).facts[0]?.id ?? "");
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
    const [a, b] = [await createUser(), await createUser()];
    const [berlin, paris, lyon] = await moves(a.key);
    await importFacts(a.key, [{ text: "I play the cello" }]);
    await moves(b.key);

    // Before: the history is the user's to see, as replaced statements.
    expect(await stored(a.key)).toEqual(["I live in Berlin", "I live in Lyon", "I live in Paris", "I play the cello"]);
    expect((await getJson<OneFact>(a.key, `/v1/memory/facts/${lyon}`)).replaced.map((f) => f.id)).toEqual([paris]);
    expect(texts(await search(a.key, "Where did I live before?"))).toContain("I live in Paris");
    // Another user's row that names this fact as its replacer (not writable through the API) must not be reached.
    await env.DB.prepare("INSERT INTO facts (id, user_id, text, superseded_by) VALUES (?, ?, ?, ?)")
      .bind(crypto.randomUUID(), b.id, "I live in Oslo", lyon)
      .run();

    const out = await forget(a.key, lyon ?? "");

    expect(await stored(a.key)).toEqual(["I play the cello"]);
    for (const id of [berlin, paris, lyon]) expect((await api(a.key, "GET", `/v1/memory/facts/${id}`)).status).toBe(404);
    // (A search fills up to k with any fact, so only the cello can come back.)
    for (const [q, extra] of [
      ["Where did I live before?", ""],
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
