/**
 * An API caller decides what replaces what: `key` and `supersedes` on import, and PATCH /v1/memory/facts/{id}, which
 * writes a correction as a new fact that replaces the old one, history kept.
 */
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { correctFact } from "../src/memory/correct";
import { pausingD1 } from "./fault-helpers";
import { api, createUser } from "./helpers";
import { captured, getJson, importFacts } from "./memory-helpers";
import { userD1 } from "./shard-helpers";

type Fact = {
  id: string;
  text: string;
  key: string | null;
  superseded_by: string | null;
  event_at: number;
  connection_id: string | null;
  project_id: string | null;
  context_type: string;
  confidence: number;
  metadata: Record<string, unknown>;
};
type Corrected = { fact: Fact; replaced: string[] };
type ErrorBody = { error: { code: string; message: string } };

const listAll = async (key: string) => (await getJson<{ facts: Fact[] }>(key, "/v1/memory/facts?include_superseded=true")).facts;
const one = (key: string, id: string | undefined) => getJson<{ fact: Fact; replaced: Fact[]; replaced_by: Fact | null }>(key, `/v1/memory/facts/${id}`);

describe("POST /v1/memory/facts with key and supersedes", { timeout: 60_000 }, () => {
  it("replaces by key (compared lowercased) and by the ids given, and nothing without either", async () => {
    const u = await createUser();
    const [berlin, muse, tea] = (
      await importFacts(u.key, [
        { text: "User lives in Berlin", key: "user.home_city" },
        { text: "User's favourite band is Muse" },
        { text: "User drinks green tea" },
      ])
    ).facts;
    const out = await importFacts(u.key, [
      { text: "User moved to Lisbon", key: " User.Home_City " },
      { text: "User's favourite band is Wet Leg", supersedes: [muse?.id ?? ""] },
      { text: "User drinks coffee now" },
    ]);
    expect(out.superseded.sort()).toEqual([berlin?.id, muse?.id].sort());
    const [lisbon, wetLeg] = out.facts;
    expect((await one(u.key, berlin?.id)).replaced_by?.id).toBe(lisbon?.id);
    expect((await one(u.key, lisbon?.id)).fact.key).toBe("user.home_city");
    expect((await one(u.key, muse?.id)).fact.superseded_by).toBe(wetLeg?.id);
    expect((await one(u.key, tea?.id)).fact.superseded_by).toBeNull();
  });

  it("makes a fact dated before the current one of its key history at once", async () => {
    const u = await createUser();
    const [lisbon] = (await importFacts(u.key, [{ text: "User lives in Lisbon", key: "user.home_city", metadata: { date: "2025-05-01" } }])).facts;
    const late = await importFacts(u.key, [{ text: "User lives in Berlin", key: "user.home_city", metadata: { date: "2023-01-10" } }]);
    expect(late.superseded).toEqual([late.facts[0]?.id]);
    expect((await one(u.key, late.facts[0]?.id)).fact.superseded_by).toBe(lisbon?.id);
    expect((await one(u.key, lisbon?.id)).fact.superseded_by).toBeNull();
  });

  it("refuses a bad key or supersedes with a 400 naming the field, and writes nothing", async () => {
    const u = await createUser();
    const cases: [unknown, string][] = [
      [{ key: "" }, "facts.0.key"],
      [{ key: "   " }, "facts.0.key"],
      [{ key: "k".repeat(101) }, "facts.0.key"],
      [{ key: "user.\u200bhome_city" }, "facts.0.key"],
      [{ key: "user\nhome_city" }, "facts.0.key"],
      [{ key: 5 }, "facts.0.key"],
      [{ supersedes: ["not-a-fact-id"] }, "facts.0.supersedes.0"],
      [{ supersedes: Array.from({ length: 21 }, () => crypto.randomUUID()) }, "facts.0.supersedes"],
      [{ supersedes: "x" }, "facts.0.supersedes"],
    ];
    for (const [extra, field] of cases) {
      const res = await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "User lives in Berlin", ...(extra as object) }] });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      const body = (await res.json()) as ErrorBody;
      expect(body.error).toMatchObject({ code: "invalid_request", message: expect.stringContaining(field) });
    }
    expect(await listAll(u.key)).toEqual([]);
  });

  it("refuses another user's fact or a missing one in supersedes (404), and writes nothing of the import", async () => {
    const a = await createUser();
    const b = await createUser();
    const [theirs] = (await importFacts(a.key, [{ text: "User lives in Oslo" }])).facts;
    for (const id of [theirs?.id, crypto.randomUUID()]) {
      const res = await api(b.key, "POST", "/v1/memory/facts", {
        facts: [{ text: "User grows tomatoes" }, { text: "User lives in Bergen", supersedes: [id] }],
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as ErrorBody).error.message).toContain("facts.1.supersedes");
    }
    expect(await listAll(b.key)).toEqual([]);
    expect((await one(a.key, theirs?.id)).fact.superseded_by).toBeNull();
  });
});

describe("PATCH /v1/memory/facts/{id}", { timeout: 60_000 }, () => {
  it("writes the correction as a new fact that replaces the old one and inherits its scope, key, event time and metadata", async () => {
    const u = await createUser();
    const project = (await (await api(u.key, "POST", "/v1/projects", { name: "Move" })).json()) as { id: string };
    const [old] = (
      await importFacts(u.key, [
        {
          text: "User lives in Bremen",
          key: "user.home_city",
          metadata: { date: "2024-03-01", session_id: "s1", project_id: project.id, context_type: "user_profile" },
        },
      ])
    ).facts;
    const res = await api(u.key, "PATCH", `/v1/memory/facts/${old?.id}`, { text: "User lives in Bremerhaven", metadata: { note: "typo" } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Corrected;
    expect(body.replaced).toEqual([old?.id]);
    expect(body.fact.id).not.toBe(old?.id);
    expect(body.fact).toMatchObject({
      text: "User lives in Bremerhaven",
      key: "user.home_city",
      superseded_by: null,
      event_at: Date.UTC(2024, 2, 1),
      project_id: project.id,
      context_type: "user_profile",
      metadata: { session_id: "s1", note: "typo", date: "2024-03-01", project_id: project.id },
    });
    // History kept: the old fact stays, replaced; the new one lists it.
    const before = await one(u.key, old?.id);
    expect(before.fact.superseded_by).toBe(body.fact.id);
    expect(before.replaced_by?.text).toBe("User lives in Bremerhaven");
    expect((await one(u.key, body.fact.id)).replaced.map((f) => f.id)).toEqual([old?.id]);
    expect((await getJson<{ facts: Fact[] }>(u.key, "/v1/memory/facts")).facts.map((f) => f.text)).toEqual(["User lives in Bremerhaven"]);

    // A key and a date given replace the inherited ones; the same text again keeps the id and changes only the key.
    const again = (await (
      await api(u.key, "PATCH", `/v1/memory/facts/${body.fact.id}`, { text: "User lives in Bremerhaven", key: "user.city" })
    ).json()) as Corrected;
    expect(again).toMatchObject({ fact: { id: body.fact.id, key: "user.city" }, replaced: [] });
    const dated = (await (
      await api(u.key, "PATCH", `/v1/memory/facts/${body.fact.id}`, { text: "User lives in Bremerhaven, near the port", metadata: { date: "2024-04-01" } })
    ).json()) as Corrected;
    expect(dated.fact).toMatchObject({ key: "user.city", event_at: Date.UTC(2024, 3, 1) });
  });

  it("refuses bad input with a 400 and changes nothing", async () => {
    const u = await createUser();
    const [fact] = (await importFacts(u.key, [{ text: "User lives in Bremen", key: "user.home_city" }])).facts;
    const cases: [string, unknown, string][] = [
      [`/v1/memory/facts/${fact?.id}`, {}, "text"],
      [`/v1/memory/facts/${fact?.id}`, { text: "  " }, "text"],
      [`/v1/memory/facts/${fact?.id}`, { text: "User lives in Kiel", key: "\u200b" }, "key"],
      [`/v1/memory/facts/${fact?.id}`, { text: "User lives in Kiel", key: "k".repeat(101) }, "key"],
      [`/v1/memory/facts/${fact?.id}`, { text: "User lives in Kiel", metadata: { connection_id: "con_x" } }, "metadata.connection_id"],
      [`/v1/memory/facts/${fact?.id}`, { text: "User lives in Kiel", metadata: { date: "yesterday" } }, "metadata.date"],
      [`/v1/memory/facts/${fact?.id}`, { text: "User lives in Kiel", supersedes: [] }, "body"],
      ["/v1/memory/facts/not-a-uuid", { text: "User lives in Kiel" }, "id"],
    ];
    for (const [path, body, field] of cases) {
      const res = await api(u.key, "PATCH", path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as ErrorBody).error).toMatchObject({ code: "invalid_request", message: expect.stringContaining(field) });
    }
    // No body at all: refused before validation, as every JSON route does.
    expect((await api(u.key, "PATCH", `/v1/memory/facts/${fact?.id}`)).status).toBe(415);
    expect((await listAll(u.key)).map((f) => [f.text, f.superseded_by])).toEqual([["User lives in Bremen", null]]);
  });

  it("is 404 for another user's fact or a missing one, and writes nothing", async () => {
    const a = await createUser();
    const b = await createUser();
    const [theirs] = (await importFacts(a.key, [{ text: "User lives in Oslo" }])).facts;
    for (const id of [theirs?.id, crypto.randomUUID()]) {
      const res = await api(b.key, "PATCH", `/v1/memory/facts/${id}`, { text: "User lives in Bergen" });
      expect(res.status).toBe(404);
      expect(((await res.json()) as ErrorBody).error.code).toBe("not_found");
    }
    expect(await listAll(b.key)).toEqual([]);
    expect((await listAll(a.key)).map((f) => [f.text, f.superseded_by])).toEqual([["User lives in Oslo", null]]);
  });

  it("is 409 for a fact already replaced, naming the fact that replaced it", async () => {
    const u = await createUser();
    const [old] = (await importFacts(u.key, [{ text: "User lives in Bremen", key: "user.home_city" }])).facts;
    const [current] = (await importFacts(u.key, [{ text: "User moved to Kiel", key: "user.home_city" }])).facts;
    const res = await api(u.key, "PATCH", `/v1/memory/facts/${old?.id}`, { text: "User lived in Bremen until 2024" });
    expect(res.status).toBe(409);
    expect(((await res.json()) as ErrorBody).error).toMatchObject({ code: "conflict", message: expect.stringContaining(`${current?.id}`) });
    expect((await listAll(u.key)).map((f) => f.text).sort()).toEqual(["User lives in Bremen", "User moved to Kiel"]);
  });

  it("lets only one of two racing corrections replace the fact: the other is 409, and writes nothing", async () => {
    const u = await createUser();
    const [old] = (await importFacts(u.key, [{ text: "User lives in Bremen" }])).facts;
    let second: Corrected | undefined;
    // The first correction has read the fact as current; the second lands before its write.
    const db = createDb(
      pausingD1(
        /^insert into facts/i,
        async () => {
          second = (await (await api(u.key, "PATCH", `/v1/memory/facts/${old?.id}`, { text: "User lives in Kiel" })).json()) as Corrected;
        },
        await userD1(u.id),
      ),
    );
    const first = correctFact((await captured(u.id, { db })).deps, u.id, old?.id ?? "", { text: "User lives in Hamburg" });
    await expect(first).rejects.toMatchObject({ code: "conflict" });
    expect(second?.replaced).toEqual([old?.id]);
    expect((await listAll(u.key)).map((f) => f.text).sort()).toEqual(["User lives in Bremen", "User lives in Kiel"]);
  });
});
