/**
 * The fill list: when fewer than k facts share a content word with the query, its function words fill the
 * results up to k (as a plain BM25 over every word would), at a low weight and with `match` 0; when the
 * content words already find k facts, nothing is filled in. Only the searching user's facts ever fill.
 */
import { describe, expect, it } from "vitest";
import { createUser } from "./helpers";
import { getJson, importFacts } from "./memory-helpers";

type Body = { results: { id: string; text: string; match: number }[]; weak: boolean };
const find = (key: string, q: string, k: number, mode = "hybrid") =>
  getJson<Body>(key, `/v1/memory/facts/search?q=${encodeURIComponent(q)}&k=${k}&mode=${mode}`);

const FACTS = [
  "The dentist moved my appointment to Thursday",
  "The bakery on the corner closes at noon",
  "The train to Porto leaves from platform four",
  "The plants on the balcony need water twice a week",
  "The landlord fixed the heating in the bedroom",
  "My sister is visiting in the spring",
];

describe("fact search fills up to k with function-word matches only when needed", { timeout: 60_000 }, () => {
  it("fills a short list with the user's own facts, at match 0, after the real match", async () => {
    const u = await createUser();
    const other = await createUser();
    await importFacts(
      u.key,
      FACTS.map((text) => ({ text })),
    );
    await importFacts(other.key, [{ text: "The the the of the and the" }, { text: "The dentist is on the corner" }]);

    for (const mode of ["hybrid", "fulltext"]) {
      const body = await find(u.key, "when is the dentist", 4, mode);
      expect(body.results[0]?.text).toBe(FACTS[0]);
      expect(body.results).toHaveLength(4);
      // The rest share only "the" with the question.
      for (const r of body.results.slice(1)) {
        expect(r.match).toBe(0);
        expect(FACTS).toContain(r.text);
      }
    }
  });

  it("fills nothing in when the content words already find k facts", async () => {
    const u = await createUser();
    await importFacts(u.key, [
      ...FACTS.map((text) => ({ text })),
      { text: "The dentist said to floss more" },
      { text: "Booked the dentist for my sister too" },
    ]);
    const body = await find(u.key, "when is the dentist", 3, "fulltext");
    expect(body.results).toHaveLength(3);
    for (const r of body.results) expect(r.text.toLowerCase()).toContain("dentist");
  });

  it("answers a question of function words only from the fill list, and one with no words at all with nothing", async () => {
    const u = await createUser();
    await importFacts(
      u.key,
      FACTS.map((text) => ({ text })),
    );
    const body = await find(u.key, "is it on the", 3, "fulltext");
    expect(body.results).toHaveLength(3);
    expect(body.weak).toBe(true);
    expect((await find(u.key, "?!", 3, "fulltext")).results).toEqual([]);
  });
});
