import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { importFacts as importInto } from "../src/memory/facts";
import { pausingD1 } from "./fault-helpers";
import { api, createUser } from "./helpers";
import { captured, getJson, importFacts, search } from "./memory-helpers";
import { userD1 } from "./shard-helpers";

type FactBody = {
  id: string;
  text: string;
  superseded_by: string | null;
  key: string | null;
  confidence: number;
  embedded: boolean;
  metadata: Record<string, unknown>;
};

describe("POST /v1/memory/facts (bulk import)", () => {
  it("stores facts verbatim with deterministic ids and metadata, searchable at once", async () => {
    const u = await createUser();
    const out = await importFacts(u.key, [
      { text: "User prefers   short emails", metadata: { message_id: "msg_1" } },
      { text: "The default Jira project is PROJ", metadata: { context_type: "tool_persistent", source: "tool_indexed" } },
    ]);
    expect(out.embedded).toBe(2);
    expect(out.facts[0]?.text).toBe("User prefers short emails");
    expect(out.facts[0]?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Same text and scope: the same id, one row (confidence reinforced).
    const again = await importFacts(u.key, [{ text: "User prefers short emails" }]);
    expect(again.facts[0]?.id).toBe(out.facts[0]?.id);
    const list = await getJson<{ facts: FactBody[] }>(u.key, "/v1/memory/facts");
    expect(list.facts).toHaveLength(2);
    const emails = list.facts.find((f) => f.text === "User prefers short emails");
    expect(emails?.confidence).toBeGreaterThan(0.8);
    expect(emails?.metadata).toMatchObject({
      user_id: u.id,
      connection_id: null,
      context_type: "user_persistent",
      source: "user_provided",
      message_id: "msg_1",
    });
    expect(emails?.embedded).toBe(true);
    // Imported once with no confidence given: the documented default (docs/memory.md, "Import").
    expect(list.facts.find((f) => f.text === "The default Jira project is PROJ")?.confidence).toBe(0.8);

    const hits = await search(u.key, "jira project");
    expect(hits.results[0]).toMatchObject({ text: "The default Jira project is PROJ", metadata: { context_type: "tool_persistent" } });
    expect(hits.results[0]?.score).toBeGreaterThan(0);
  });

  it("rejects bad input with the error shape and writes nothing", async () => {
    const u = await createUser();
    for (const body of [
      { facts: [] },
      { facts: [{ text: "" }] },
      { facts: [{ text: "x", metadata: { confidence: 2 } }] },
      { facts: [{ text: "x", extra: 1 }] },
      { nope: 1 },
    ]) {
      const res = await api(u.key, "POST", "/v1/memory/facts", body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    }
    expect((await getJson<{ facts: unknown[] }>(u.key, "/v1/memory/facts")).facts).toEqual([]);
    expect((await api(null, "POST", "/v1/memory/facts", { facts: [{ text: "x" }] })).status).toBe(401);
  });

  it("refuses a metadata.date it cannot place in time (400 naming the field), rather than dating the fact now", async () => {
    const u = await createUser();
    for (const date of ["yesterday", "2024-13-45", "1709251200000", 1e17, -5, true]) {
      const res = await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "Went kayaking with Ines", metadata: { date } }] });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error).toMatchObject({ code: "invalid_request", message: expect.stringContaining("facts.0.metadata.date") });
    }
    expect((await getJson<{ facts: unknown[] }>(u.key, "/v1/memory/facts")).facts).toEqual([]);
    const ok = await importFacts(u.key, [
      { text: "Went kayaking with Ines", metadata: { date: "2024-03-10" } },
      { text: "Went kayaking with Bruno", metadata: { date: Date.UTC(2024, 7, 2) } },
    ]);
    const facts = await Promise.all(ok.facts.map((f) => getJson<{ fact: { event_at: number } }>(u.key, `/v1/memory/facts/${f.id}`)));
    expect(facts.map((f) => f.fact.event_at)).toEqual([Date.UTC(2024, 2, 10), Date.UTC(2024, 7, 2)]);
  });

  it("cleans metadata like text: no invisible characters in keys or values, secrets redacted", async () => {
    const u = await createUser();
    const [fact] = (
      await importFacts(u.key, [
        {
          text: "Deploys go out on Tuesdays",
          metadata: { "no\u200bte\u0000": "ok\u202e\u2066 fine", api_token: "hunter2", via: "ghp_abcdefghijklmnopqrstuvwxyz0123456789" },
        },
      ])
    ).facts;
    const stored = await getJson<{ fact: { metadata: Record<string, unknown> } }>(u.key, `/v1/memory/facts/${fact?.id}`);
    expect(stored.fact.metadata).toMatchObject({ note: "ok fine", api_token: "[REDACTED]", via: "[REDACTED]" });
    expect(JSON.stringify(stored.fact.metadata)).not.toMatch(/[\u200b\u202e\u2066]|\\u0000/);
  });

  it("refuses another user's connection id (404) and stores nothing", async () => {
    const a = await createUser();
    const b = await createUser();
    const conn = (await (await api(a.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    const res = await api(b.key, "POST", "/v1/memory/facts", { facts: [{ text: "Default project is X", metadata: { connection_id: conn.id } }] });
    expect(res.status).toBe(404);
    expect((await getJson<{ facts: unknown[] }>(b.key, "/v1/memory/facts")).facts).toEqual([]);
  });

  it("an import whose connection is deleted while it is written stores nothing of it, and is not taken for one over the quota", async () => {
    const u = await createUser();
    const conn = (await (await api(u.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    // The import has checked the connection is the user's; the user deletes it just before the facts are written.
    let deleted = 0;
    const db = createDb(
      pausingD1(
        /^insert into facts/i,
        async () => {
          deleted = (await api(u.key, "DELETE", `/v1/connections/${conn.id}`)).status;
        },
        await userD1(u.id),
      ),
    );
    const quota = { kind: "facts" as const, plan: "free" as const, limit: 100 };
    const out = await importInto(
      (await captured(u.id, { db })).deps,
      u.id,
      [{ text: "The default Jira project is PROJ", metadata: { connection_id: conn.id } }],
      quota,
    );
    expect(deleted).toBe(200);
    // Answered as an import the deletion came after (which took its facts with it), not as 403 quota_exceeded.
    expect(out.facts).toHaveLength(1);
    expect((await getJson<{ facts: unknown[] }>(u.key, "/v1/memory/facts?include_superseded=true")).facts).toEqual([]);
  });

  it("refuses another user's or a nonexistent project id (404) and stores nothing of the import", async () => {
    const a = await createUser();
    const b = await createUser();
    const theirs = (await (await api(a.key, "POST", "/v1/projects", { name: "A's plans" })).json()) as { id: string };
    const mine = (await (await api(b.key, "POST", "/v1/projects", { name: "Garden" })).json()) as { id: string };
    for (const projectId of [theirs.id, "prj_does_not_exist"]) {
      const res = await api(b.key, "POST", "/v1/memory/facts", {
        facts: [
          { text: "User grows tomatoes", metadata: { project_id: mine.id } },
          { text: "User's cat is called Miso", metadata: { project_id: projectId } },
        ],
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain("project");
    }
    expect((await getJson<{ facts: unknown[] }>(b.key, "/v1/memory/facts")).facts).toEqual([]);
    const own = await api(b.key, "POST", "/v1/memory/facts", { facts: [{ text: "User grows tomatoes", metadata: { project_id: mine.id } }] });
    expect(own.status).toBe(201);
  });
});

describe("secrets never stay in memory", () => {
  it("redacts keys, tokens and passwords from observations, facts and MEMORY entries before they are stored", async () => {
    const u = await createUser();
    const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    const key = "sk-ant-api03-abcdefghijklmnopqrstuvwx";
    const observed = await api(u.key, "POST", "/v1/observations", { observations: [{ type: "learned_fact", content: `User's deploy token is ${token}` }] });
    expect(observed.status).toBe(202);
    await importFacts(u.key, [{ text: `User's Anthropic key is ${key}` }]);
    expect((await api(u.key, "POST", "/v1/brain/memory", { content: "Staging login: password=hunter2hunter2" })).status).toBe(201);
    // The user's own corrections of working memory and the scaffold are stored the same way.
    expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: `Deploys with ${token}.` })).status).toBe(200);
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { Keys: { anthropic: key }, DB_PASSWORD: "hunter2hunter2" } })).status).toBe(200);
    const stored = JSON.stringify([
      await getJson(u.key, "/v1/memory/events"),
      await getJson(u.key, "/v1/memory/facts"),
      await getJson(u.key, "/v1/brain/memory"),
      await getJson(u.key, "/v1/memory/working"),
      await getJson(u.key, "/v1/memory/scaffold"),
      await getJson(u.key, "/v1/memory/runs/2"),
    ]);
    for (const secret of [token, key, "hunter2hunter2"]) expect(stored).not.toContain(secret);
    expect(stored).toContain("User's deploy token is [REDACTED]");
    expect(stored).toContain("User's Anthropic key is [REDACTED]");
    expect(stored).toContain("password=[REDACTED]");
    expect(stored).toContain('"DB_PASSWORD":"[REDACTED]"');
    // What it was about stays findable.
    expect((await search(u.key, "Anthropic key")).results[0]?.text).toBe("User's Anthropic key is [REDACTED]");
  });
});

describe("retrieval scope", () => {
  it("never returns another user's facts, by text or by vector", async () => {
    const a = await createUser();
    const b = await createUser();
    await importFacts(a.key, [{ text: "User's secret codename is Bluebird" }]);
    await importFacts(b.key, [{ text: "User likes gardening" }]);
    for (const mode of ["hybrid", "fulltext", "vector"]) {
      expect((await search(b.key, "secret codename Bluebird", `&mode=${mode}`)).results).toEqual([]);
      expect((await search(a.key, "secret codename Bluebird", `&mode=${mode}`)).results).toHaveLength(1);
    }
  });

  it("returns user-level facts always and connection facts only while the connection is active", async () => {
    const u = await createUser();
    const conn = (await (await api(u.key, "POST", "/v1/connections", { name: "Jira" })).json()) as { id: string };
    await importFacts(u.key, [
      { text: "Default Jira project is PROJ", metadata: { connection_id: conn.id, context_type: "tool_persistent" } },
      { text: "User tracks Jira issues every morning" },
    ]);
    expect((await search(u.key, "jira")).results.map((r) => r.text).sort()).toEqual(["Default Jira project is PROJ", "User tracks Jira issues every morning"]);
    await api(u.key, "PATCH", `/v1/connections/${conn.id}`, { active: false });
    expect((await search(u.key, "jira")).results.map((r) => r.text)).toEqual(["User tracks Jira issues every morning"]);
  });

  it("finds a fact by vector similarity alone the moment it is stored (read-your-writes)", async () => {
    const u = await createUser();
    await importFacts(u.key, [{ text: "User moved to Lisbon last spring" }]);
    const hits = await search(u.key, "where does the user live?", "&mode=vector");
    expect(hits.results[0]?.text).toBe("User moved to Lisbon last spring");
    // Full text shares only "the user" with it: a loose match, flagged as weak.
    const lexical = (await (await api(u.key, "GET", `/v1/memory/facts/search?q=${encodeURIComponent("what does the user eat?")}&mode=fulltext`)).json()) as {
      results: { match: number }[];
      weak: boolean;
    };
    expect(lexical.weak).toBe(true);
  });

  it("deduplicates and honours k", async () => {
    const u = await createUser();
    await importFacts(
      u.key,
      Array.from({ length: 12 }, (_, i) => ({ text: `User owns bicycle number ${i}` })),
    );
    const hits = await search(u.key, "bicycle", "&k=3");
    expect(hits.results).toHaveLength(3);
    expect(new Set(hits.results.map((r) => r.id)).size).toBe(3);
    expect(hits.results.map((r) => r.score)).toEqual([...hits.results.map((r) => r.score)].sort((x, y) => y - x));
    expect((await api(u.key, "GET", "/v1/memory/facts/search?q=")).status).toBe(400);
    expect((await api(u.key, "GET", "/v1/memory/facts/search?q=x&k=500")).status).toBe(400);
  });
});

describe("contradictions, history and forgetting", () => {
  it("supersedes a fact by its key, keeps it as history, and retrieves only the latest", async () => {
    const u = await createUser();
    const home = "user.home_city";
    const [berlin] = (await importFacts(u.key, [{ text: "User lives in Berlin", key: home }])).facts;
    await importFacts(u.key, [{ text: "User likes Berlin techno" }]);
    const paris = await importFacts(u.key, [{ text: "User moved to Paris", key: home }]);
    expect(paris.superseded).toEqual([berlin?.id]);
    const hits = await search(u.key, "where does the user live, Berlin or Paris?");
    expect(hits.results.map((r) => r.text)).toContain("User moved to Paris");
    expect(hits.results.map((r) => r.text)).not.toContain("User lives in Berlin");
    // Unrelated statements about the same place are not contradictions.
    expect(hits.results.map((r) => r.text)).toContain("User likes Berlin techno");

    const history = await getJson<{ fact: FactBody; replaced: FactBody[] }>(u.key, `/v1/memory/facts/${paris.facts[0]?.id}`);
    expect(history.replaced.map((f) => f.text)).toEqual(["User lives in Berlin"]);
    const old = await getJson<{ fact: FactBody; replaced_by: FactBody | null }>(u.key, `/v1/memory/facts/${berlin?.id}`);
    expect(old.replaced_by?.text).toBe("User moved to Paris");
    expect((await getJson<{ facts: FactBody[] }>(u.key, "/v1/memory/facts")).facts.map((f) => f.text)).not.toContain("User lives in Berlin");
    expect((await getJson<{ facts: FactBody[] }>(u.key, "/v1/memory/facts?include_superseded=true")).facts.map((f) => f.text)).toContain(
      "User lives in Berlin",
    );

    // Moving back reinstates the old fact (it keeps its key) and supersedes the newer one.
    await importFacts(u.key, [{ text: "User lives in Berlin" }]);
    expect((await getJson<{ fact: FactBody }>(u.key, `/v1/memory/facts/${berlin?.id}`)).fact).toMatchObject({ superseded_by: null, key: home });
    expect((await search(u.key, "where does the user live")).results.map((r) => r.text)).toContain("User lives in Berlin");
    expect((await search(u.key, "where does the user live")).results.map((r) => r.text)).not.toContain("User moved to Paris");
  });

  it("within one import, the last of two facts with one key wins", async () => {
    const u = await createUser();
    const out = await importFacts(u.key, [
      { text: "User's favorite color is blue", key: "user.favorite_color" },
      { text: "User's favorite color is green", key: "user.favorite_color" },
    ]);
    expect(out.facts[0]?.superseded_by).toBe(out.facts[1]?.id);
    expect((await search(u.key, "favorite color")).results.map((r) => r.text)).toEqual(["User's favorite color is green"]);
  });

  it("DELETE /v1/memory/facts/{id} forgets one fact; another user's id is 404", async () => {
    const a = await createUser();
    const b = await createUser();
    const [fact] = (await importFacts(a.key, [{ text: "User is allergic to peanuts" }])).facts;
    expect((await api(b.key, "DELETE", `/v1/memory/facts/${fact?.id}`)).status).toBe(404);
    expect((await api(b.key, "GET", `/v1/memory/facts/${fact?.id}`)).status).toBe(404);
    expect((await api(a.key, "DELETE", "/v1/memory/facts/not-a-uuid")).status).toBe(400);
    expect((await api(a.key, "DELETE", `/v1/memory/facts/${fact?.id}`)).status).toBe(200);
    expect((await api(a.key, "DELETE", `/v1/memory/facts/${fact?.id}`)).status).toBe(404);
    for (const mode of ["fulltext", "vector"]) expect((await search(a.key, "peanuts allergy", `&mode=${mode}`)).results).toEqual([]);
  });
});
