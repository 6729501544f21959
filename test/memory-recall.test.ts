import { describe, expect, it } from "vitest";
import { planSearch, rankCandidates } from "../src/memory/ranking";
import type { Scored } from "../src/memory/search-types";
import { timeCues } from "../src/memory/when";
import { api, createUser } from "./helpers";
import { getJson, importFacts } from "./memory-helpers";

type Hit = {
  id: string;
  text: string;
  score: number;
  match: number;
  event_at: number;
  superseded_by: string | null;
  neighbours?: { text: string; position: string }[];
};
type Body = { results: Hit[]; weak: boolean; when: { from: number; to: number; phrase: string } | null };
const find = (key: string, q: string, extra = "") => getJson<Body>(key, `/v1/memory/facts/search?q=${encodeURIComponent(q)}${extra}`);
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

describe("time in questions", () => {
  it("reads periods and the present with a date parser, relative to now, in more than one language", () => {
    const now = day("2025-06-15");
    expect(timeCues("where did I go in March 2024?", now).range).toMatchObject({ from: day("2024-03-01"), to: day("2024-04-01") });
    // A day named loosely ("last week", "yesterday") is a week around it: a preference, not a filter.
    expect(timeCues("what did I cook yesterday", now).range).toMatchObject({ from: day("2025-06-11"), to: day("2025-06-18") });
    expect(timeCues("qu'est-ce que j'ai fait hier ?", now).range).toMatchObject({ from: day("2025-06-11"), to: day("2025-06-18") });
    expect(timeCues("Was habe ich am 3. März 2024 gemacht?", now).range).toMatchObject({ from: day("2024-02-29"), to: day("2024-03-07") });
    expect(timeCues("where do I live now?", now)).toMatchObject({ range: null, current: true });
    expect(timeCues("what is my cat called", now)).toEqual({ range: null, current: false });
    // A time of day is no period; "now" beside it still asks about the present.
    expect(timeCues("what do I drink in the morning now?", now)).toEqual({ range: null, current: true });
  });
});

describe("ties", () => {
  it("answers equal matches in the same order whatever order the index read them in: the later written first", () => {
    const fact = (rowid: number, text: string): Scored => ({
      ...{ id: `f${rowid}`, rowid, text, metadata: "{}", confidence: 0.8, recall_count: 0, last_recalled_at: null },
      ...{ created_at: day("2024-01-01"), event_at: day("2024-01-01"), superseded_by: null, lexical: 1 },
    });
    const plan = planSearch({ userId: "u", query: "hiking", k: 5, connectionIds: [], mode: "fulltext" }, day("2025-01-01"));
    const order = (text: Scored[]) =>
      rankCandidates(
        plan,
        { text, vector: [], docFrequency: new Map([["hike", 2]]), facts: 2, embeddingTokens: 0, degraded: null },
        { minScore: 0.1 },
      ).results.map((r) => r.id);
    const [dawn, dusk] = [fact(1, "Ann went hiking at dawn"), fact(2, "Ann went hiking at dusk")];
    expect(order([dawn, dusk])).toEqual(["f2", "f1"]);
    expect(order([dusk, dawn])).toEqual(["f2", "f1"]);
  });
});

describe("recall: event time, history, periods, neighbours", { timeout: 60_000 }, () => {
  it("keeps each fact's event time and filters and orders by it", async () => {
    const u = await createUser();
    await importFacts(u.key, [
      { text: "Went kayaking on the lake with Ines", metadata: { date: "2024-03-10" } },
      { text: "Went kayaking at the coast with Bruno", metadata: { date: "2024-08-02" } },
      { text: "Went kayaking on the river alone" },
    ]);
    const march = await find(u.key, "kayaking", "&after=2024-03-01&before=2024-04-01");
    expect(march.results.map((r) => r.text)).toEqual(["Went kayaking on the lake with Ines"]);
    expect(march.results[0]?.event_at).toBe(day("2024-03-10"));
    const newest = await find(u.key, "kayaking", "&k=3&order=newest");
    expect(newest.results.map((r) => r.text)).toEqual([
      "Went kayaking on the river alone",
      "Went kayaking at the coast with Bruno",
      "Went kayaking on the lake with Ines",
    ]);
    // A period named in the question is preferred, and reported.
    const august = await find(u.key, "who did I go kayaking with in August 2024?");
    expect(august.results[0]?.text).toBe("Went kayaking at the coast with Bruno");
    expect(august.when?.phrase).toBe("August 2024");
  });

  it("puts the latest statement first when the question asks about the present", async () => {
    const u = await createUser();
    await importFacts(u.key, [
      { text: "I drink black coffee every morning", metadata: { date: "2024-01-05" } },
      { text: "These days my morning drink is green tea", metadata: { date: "2024-09-01" } },
    ]);
    const now = await find(u.key, "what do I drink in the morning now?");
    expect(now.results[0]?.text).toBe("These days my morning drink is green tea");
  });

  it("supersedes by the caller's key and event time on import, and shows history only when asked", async () => {
    const u = await createUser();
    const [current] = (await importFacts(u.key, [{ text: "User lives in Porto", key: "user.home_city", metadata: { date: "2025-02-01" } }])).facts;
    // An older statement of the same key imported later becomes history at once.
    const late = await importFacts(u.key, [{ text: "User lives in Berlin", key: "user.home_city", metadata: { date: "2023-05-01" } }]);
    expect(late.superseded).toEqual([late.facts[0]?.id]);
    expect((await find(u.key, "where does the user live")).results.map((r) => r.text)).toEqual(["User lives in Porto"]);
    const history = await find(u.key, "where does the user live", "&history=true");
    expect(history.results.map((r) => [r.text, r.superseded_by])).toEqual([
      ["User lives in Porto", null],
      ["User lives in Berlin", current?.id],
    ]);
    // Another user's history is never reachable.
    const other = await createUser();
    expect((await find(other.key, "where does the user live", "&history=true")).results).toEqual([]);
  });

  it("keeps every turn of a conversation imported verbatim, and prefers the latest of near-equal matches about now", async () => {
    const u = await createUser();
    const turn = (text: string, date: string) => ({ text, metadata: { date, session_id: date } });
    await importFacts(u.key, [turn("I live in Lisbon and still get lost.", "2024-01-10")]);
    await importFacts(u.key, [turn("My friend Sam lives in Leeds and keeps inviting me.", "2024-06-02")]);
    await importFacts(u.key, [turn("I live in Ghent now, the boxes are unpacked.", "2025-01-20")]);
    // No caller key, no supersession: every statement stays searchable.
    const all = await find(u.key, "where do I live?", "&k=5");
    expect(all.results).toHaveLength(3);
    expect(all.results.every((r) => r.superseded_by === null)).toBe(true);
    // Asked about now, the latest of the near-equal matches comes first.
    const now = await find(u.key, "where do I live now?");
    expect(now.results[0]?.text).toBe("I live in Ghent now, the boxes are unpacked.");
    // The caller can say so too, and can turn it off.
    const latest = await find(u.key, "where do I live?", "&prefer_latest=true");
    expect(latest.results[0]?.text).toBe("I live in Ghent now, the boxes are unpacked.");
    const relevance = await find(u.key, "where do I live now?", "&prefer_latest=false");
    expect(relevance.results.map((r) => r.text)).toContain("I live in Lisbon and still get lost.");
  });

  it("attaches the neighbouring turns of a hit's session, without counting them as results", async () => {
    const u = await createUser();
    await importFacts(u.key, [
      { text: "What should I name him?", metadata: { session_id: "s1" } },
      { text: "We adopted a rescue puppy", metadata: { session_id: "s1" } },
      { text: "Call him Biscuit!", metadata: { session_id: "s1" } },
      { text: "Unrelated chat in another session", metadata: { session_id: "s2" } },
    ]);
    const hits = await find(u.key, "rescue puppy", "&k=1&neighbours=true");
    expect(hits.results).toHaveLength(1);
    expect(hits.results[0]?.neighbours).toEqual([
      expect.objectContaining({ text: "What should I name him?", position: "before" }),
      expect.objectContaining({ text: "Call him Biscuit!", position: "after" }),
    ]);
  });

  it("flags a question about something never stored as weak", async () => {
    const u = await createUser();
    await importFacts(u.key, [{ text: "My sister Clara is a nurse in Ghent" }, { text: "I play the cello on Thursdays" }]);
    expect((await find(u.key, "what does my sister Clara do?")).weak).toBe(false);
    expect((await find(u.key, "which university did I graduate from?")).weak).toBe(true);
  });

  it("weighs a word's rarity by the user's own facts, whatever other users store", async () => {
    const [me, other] = [await createUser(), await createUser()];
    await importFacts(me.key, [{ text: "A zebra walked past the window" }]);
    const score = async () => (await find(me.key, "zebra quokka")).results[0]?.match;
    const alone = await score();
    // Another user writing "quokka" hundreds of times must not make it a common word for me.
    await importFacts(
      other.key,
      Array.from({ length: 300 }, (_, i) => ({ text: `quokka sighting number ${i}` })),
    );
    expect(await score()).toBe(alone);
    // 1 / ln(e + df) per word: zebra (df 1) over zebra + quokka (df 0).
    expect(alone).toBeCloseTo(1 / Math.log(Math.E + 1) / (1 / Math.log(Math.E + 1) + 1), 3);
  });

  it("does not bury a long fact that holds the question's rarest word under short ones holding a commoner one", async () => {
    const u = await createUser();
    const long =
      "We spent the whole afternoon wandering the old town in the rain, got lost twice near the harbour, " +
      "and the best thing we found all week was a tiny shop selling cardamom buns still warm from the oven";
    await importFacts(u.key, [
      { text: long },
      { text: "Pastries again today" },
      { text: "Bought pastries" },
      { text: "Pastries for breakfast" },
      ...["I cycle to work", "My sister lives in Ghent", "The printer is broken", "I read before bed"].map((text) => ({ text })),
    ]);
    // A long conversational turn says more things, not one thing at length: BM25's length normalisation must not
    // outweigh the rarity of the word only it contains (with the textbook b = 0.75 the three short lines came first).
    const hits = await find(u.key, "cardamom pastries", "&mode=fulltext&k=4");
    expect(hits.results.map((r) => r.text)).toHaveLength(4);
    expect(hits.results[0]?.text).toBe(long);
  });

  it("searches a user's common words when the question's other words are in none of their facts", async () => {
    const u = await createUser();
    // "bakery" and "open" are each in 30 of the user's facts: over the common-word limit (20 facts, or 5%).
    await importFacts(u.key, [
      { text: "The bakery opens at 7am" },
      ...Array.from({ length: 30 }, (_, i) => ({ text: `The bakery sold ${i + 10} loaves of rye on day ${i + 1}` })),
      ...Array.from({ length: 30 }, (_, i) => ({ text: `Left the garden gate open on day ${i + 1}` })),
    ]);
    // "what", "time" and "does" are in no fact: searched alone, they found nothing, and the common "bakery" and
    // "open" were left out (full text answered with no fact at all).
    const hits = await find(u.key, "What time does the bakery open?", "&mode=fulltext&k=3");
    expect(hits.results[0]?.text).toBe("The bakery opens at 7am");
  });

  it("rejects a bad time range and writes nothing", async () => {
    const u = await createUser();
    for (const q of ["after=yesterday", "after=2024-05-01&before=2024-04-01", "order=random", "history=yes", "prefer_latest=1"]) {
      const res = await api(u.key, "GET", `/v1/memory/facts/search?q=x&${q}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    }
  });
});
