/**
 * No stop list: a word found in a large share of the user's own facts (more than 5%, and in more than 20 of them)
 * is left out of the full-text query, whatever the language, unless every word of the question is that common.
 * Only the searching user's facts are counted.
 */
import { describe, expect, it } from "vitest";
import { createUser } from "./helpers";
import { getJson, importFacts } from "./memory-helpers";

type Body = { results: { id: string; text: string; match: number }[]; weak: boolean };
const find = (key: string, q: string, k: number) => getJson<Body>(key, `/v1/memory/facts/search?q=${encodeURIComponent(q)}&k=${k}&mode=fulltext`);

/** 30 facts that all say "the" (and, in French, "le"), one of which is about the dentist. */
const FACTS = [
  "The dentist moved my appointment to Thursday",
  "Le dentiste a déplacé le rendez-vous à jeudi",
  ...Array.from({ length: 28 }, (_, i) => `The plant number ${i} on the balcony needs le water`),
];

describe("words common in the user's own facts", { timeout: 60_000 }, () => {
  it("are not searched: a question's common words bring back nothing by themselves, in any language", async () => {
    const u = await createUser();
    await importFacts(
      u.key,
      FACTS.map((text) => ({ text })),
    );
    // "the" and "le" are in every fact: only "dentist" is searched (porter joins "dentiste"), so only the dentist's
    // facts come back.
    for (const q of ["when is the dentist", "quand est le dentiste"]) {
      expect((await find(u.key, q, 5)).results.map((r) => r.text).sort()).toEqual([FACTS[0], FACTS[1]].sort());
    }
  });

  it("are searched when the question has nothing else, and counted on the searching user's facts only", async () => {
    const [u, other] = [await createUser(), await createUser()];
    await importFacts(
      u.key,
      FACTS.map((text) => ({ text })),
    );
    expect((await find(u.key, "the", 5)).results).toHaveLength(5);
    // For a user with few facts, "the" is no common word: it is searched, and another user's facts never count.
    await importFacts(other.key, [{ text: "The dentist is on the corner" }, { text: "The bakery closes at noon" }]);
    const texts = (await find(other.key, "when is the dentist", 5)).results.map((r) => r.text);
    expect(texts[0]).toBe("The dentist is on the corner");
    expect(texts).toEqual(expect.arrayContaining(["The bakery closes at noon"]));
    expect(texts).toHaveLength(2);
  });
});
