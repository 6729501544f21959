import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import { capWords, wordCount } from "../src/lib/text";
import { thirdPerson } from "../src/lib/third-person";
import { consolidateUser } from "../src/memory/consolidate";
import {
  CONSOLIDATION_FORMAT,
  consolidationFormat,
  consolidationPrompt,
  mergeScaffold,
  normalizeJson,
  parseConsolidationOutput,
} from "../src/memory/consolidation-schema";
import { dot } from "../src/memory/embed";
import { canonicalJson, uuidv5 } from "../src/memory/ids";
import { offlineConsolidate } from "../src/memory/offline-consolidate";
import { hashEmbed } from "../src/memory/offline-embed";
import { profileKey, statementKey } from "../src/memory/offline-keys";
import { fitScaffold } from "../src/memory/providers";
import { backoffSeconds } from "../src/memory/queue";
import { ftsQuery } from "../src/memory/retrieval";
import { stem } from "../src/memory/text";
import { MAX_TOMBSTONES, pruneTombstones } from "../src/memory/tiers";
import { createModelClient } from "../src/model/anthropic";
import { schemaInstance } from "../src/model/schema-instance";
import { createUser } from "./helpers";
import { captured, getJson, observe, search } from "./memory-helpers";

describe("ids", () => {
  it("computes RFC 9562 UUIDv5 (known vector) and canonical JSON", async () => {
    expect(await uuidv5("python.org", "6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe("886313e1-3b8a-5372-9b90-0c9aee199e5d");
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
  });
});

describe("text and the local embedder", () => {
  it("stems inflections together", () => {
    expect(["emails", "emailing", "emailed"].map(stem)).toEqual(["email", "email", "email"]);
    expect(stem("preferences")).toBe(stem("preference"));
    expect(capWords("one two\nthree four", 3)).toBe("one two\nthree");
    expect(wordCount(capWords("w ".repeat(600), 500))).toBe(500);
  });

  it("is deterministic, normalised, and ranks overlapping texts above unrelated ones", () => {
    const q = hashEmbed("which project management tool does the team use?");
    const match = hashEmbed("The team uses Linear for project management");
    const other = hashEmbed("User's dog is called Biscuit");
    expect(hashEmbed("which project management tool does the team use?")).toEqual(q);
    expect(dot(match, match)).toBeCloseTo(1, 6);
    expect(dot(q, match)).toBeGreaterThan(0.3);
    expect(dot(q, other)).toBe(0);
    // Concept tags bridge a few everyday paraphrases.
    expect(dot(hashEmbed("where does she live"), hashEmbed("moved to Lisbon"))).toBeGreaterThan(0.12);
  });

  it("builds a quoted OR full-text query without operators", () => {
    expect(ftsQuery('What is "NEAR" the AND office?')).toBe('"what" OR "is" OR "near" OR "the" OR "and" OR "office"');
    expect(ftsQuery("?!")).toBeNull();
  });
});

// Facts get no slot any more (their key is the writer's); the read path still reads questions this way until its rewrite.
describe("consolidation output", () => {
  it("normalises stringified JSON recursively and leaves other strings alone", () => {
    expect(normalizeJson({ a: '{"b": "[1, 2]"}', c: "{not json", d: "plain" })).toEqual({ a: { b: [1, 2] }, c: "{not json", d: "plain" });
    const out = parseConsolidationOutput('{"updated_scaffold": "{\\"X\\": 1}", "updated_working_memory": "[a narrative]", "facts_to_embed": "[]"}');
    // `withheld` (what the model kept out for the user's never-remember rules) defaults to none.
    expect(out).toEqual({ updated_scaffold: { X: 1 }, updated_working_memory: "[a narrative]", facts_to_embed: [], withheld: [] });
    expect(() => parseConsolidationOutput(["nope"])).toThrow(/not an object/);
  });

  it("accepts whatever the wire schema sent to the model allows: an empty profile string, blank facts, more than the caps", () => {
    const wire = consolidationFormat.schema;
    expect(parseConsolidationOutput(schemaInstance(wire))).toEqual({
      updated_scaffold: {},
      scaffold_confidence: {},
      updated_working_memory: "",
      facts_to_embed: [],
      withheld: [],
    });
    const fact = (text: string) => ({ text, confidence: 0.8, supersedes: Array.from({ length: 25 }, (_, i) => `f${i}`), connection_id: "", key: "" });
    const out = parseConsolidationOutput({
      updated_scaffold: "  ",
      scaffold_confidence: [],
      updated_working_memory: "w",
      facts_to_embed: [fact(""), fact("   "), fact("x".repeat(1500)), ...Array.from({ length: 60 }, (_, i) => fact(`User fact ${i}`))],
    });
    expect(out.updated_scaffold).toEqual({});
    expect(out.facts_to_embed).toHaveLength(50);
    expect(out.facts_to_embed[0]).toMatchObject({ text: "User fact 0", supersedes: Array.from({ length: 20 }, (_, i) => `f${i}`) });
  });

  it("merges scaffolds deeply; null removes", () => {
    expect(mergeScaffold({ a: { x: 1, y: 2 }, b: 1, c: [1] }, { a: { y: null, z: 3 }, b: null, c: [2] })).toEqual({ a: { x: 1, z: 3 }, c: [2] });
  });

  it("fits the scaffold into its budget by dropping the least certain keys first", () => {
    const fitted = fitScaffold(
      { keep: "k".repeat(50), drop: "d".repeat(50) },
      { keep: { confidence: 0.9, updated_at: 1 }, drop: { confidence: 0.3, updated_at: 2 } },
      80,
    );
    expect(Object.keys(fitted)).toEqual(["keep"]);
  });

  it("remembers only the newest removed scaffold keys, and every present key", () => {
    const removed = Object.fromEntries(
      Array.from({ length: MAX_TOMBSTONES + 2 }, (_, i) => [`gone${i}`, { removed: true as const, by: "user" as const, updated_at: 1000 + i }]),
    );
    const kept = pruneTombstones({ ...removed, City: { confidence: 0.5, updated_at: 1 } });
    expect(Object.keys(kept)).toHaveLength(MAX_TOMBSTONES + 1);
    expect(kept).toHaveProperty("City");
    expect(kept).not.toHaveProperty("gone0");
    expect(kept).not.toHaveProperty("gone1");
    expect(kept).toHaveProperty("gone2");
  });

  it("backs off exponentially, capped", () => {
    expect([1, 2, 3, 4, 5, 20].map(backoffSeconds)).toEqual([2, 4, 8, 16, 32, 300]);
  });
});

describe("offline consolidation (no API key)", () => {
  it("rewrites first person into third", () => {
    expect(thirdPerson("Remember that I live in Berlin.")).toBe("User lives in Berlin");
    expect(thirdPerson("I'm allergic to peanuts")).toBe("User is allergic to peanuts");
    expect(thirdPerson("my favourite editor is vim")).toBe("User's favourite editor is vim");
    // Any verb takes its third person, past an adverb; the past and modals stay as they are.
    expect(thirdPerson("Remember that I close on Mondays")).toBe("User closes on Mondays");
    expect(thirdPerson("I don't like olives")).toBe("User doesn't like olives");
    expect(thirdPerson("I always forget my keys")).toBe("User always forgets their keys");
    expect(thirdPerson("I no longer live in Lisbon")).toBe("User no longer lives in Lisbon");
    expect(thirdPerson("I watch films and I study law")).toBe("User watches films and they study law");
    expect(thirdPerson("I went to Rome")).toBe("User went to Rome");
    expect(thirdPerson("I moved to Porto")).toBe("User moved to Porto");
    expect(thirdPerson("My dog is old but I'm fine")).toBe("User's dog is old but they're fine");
    expect(thirdPerson("I can swim")).toBe("User can swim");
  });

  it("names keys by its own English rules: the subject first, a handful of attributes, nothing else", () => {
    const cases: [string, string | null][] = [
      ["User lives in Berlin", "user.home_city"],
      ["User moved to Lisbon last spring", "user.home_city"],
      ["User has lived in Porto since 2019", "user.home_city"],
      ["User works at Acme", "user.employer"],
      ["User works as a nurse", "user.occupation"],
      ["User is married to Sam", "user.partner"],
      ["User's name is Ana", "user.name"],
      ["User's wife is Mia", "user.partner"],
      ["User's sister Clara lives in Manchester", "sister.home_city"],
      ["User's sister works for Basalt", "sister.employer"],
      ["Actually, they live in Porto now", "user.home_city"],
      // Not a current, named value of one of its attributes: no key, so nothing is replaced.
      ["User lived in Rome as a student", null],
      ["User lives in a small flat", null],
      ["User no longer lives in Lisbon", null],
      ["User likes Berlin techno", null],
      ["User's sister is visiting next week", null],
      ["Melanie: That must have been tough for you", null],
    ];
    for (const [text, key] of cases) expect(statementKey(text), text).toBe(key);
    expect(profileKey("Location")).toBe("user.home_city");
    expect(profileKey("Favourite colour")).toBe("user.favourite_colour");
  });

  it("supersedes the related facts that state its attribute without a key, as Claude is asked to", () => {
    const out = offlineConsolidate({
      model: "m",
      messages: [
        {
          role: "user",
          content: consolidationPrompt({
            working_memory: "",
            scaffold: {},
            related_facts: [
              { id: "f-berlin", text: "User lives in Berlin", confidence: 0.8 },
              { id: "f-keyed", text: "User lives in Bonn", confidence: 0.8, key: "user.home_city" },
              { id: "f-sister", text: "User's sister lives in Rome", confidence: 0.8 },
            ],
            known_keys: ["user.home_city"],
            observations: [{ id: "e1", type: "fact", content: "I moved to Lisbon", source: {} }],
          }),
        },
      ],
    });
    // The keyed one is left to the key; the sister's city is another attribute.
    expect(parseConsolidationOutput(out).facts_to_embed).toEqual([
      { text: "User moved to Lisbon", confidence: 0.7, key: "user.home_city", supersedes: ["f-berlin"] },
    ]);
  });

  it("answers the consolidation structured output deterministically from the prompt", () => {
    const prompt = consolidationPrompt({
      working_memory: "",
      scaffold: { Preferences: ["User likes tea"] },
      related_facts: [],
      known_keys: [],
      observations: [
        { id: "e1", type: "preference", content: "I prefer short emails", source: {} },
        { id: "e2", type: "scaffold_update", content: '{"Role": "CTO"}', source: {} },
        { id: "e3", type: "correction", content: "I moved to Paris", source: {} },
      ],
    });
    const out = offlineConsolidate({ model: "m", messages: [{ role: "user", content: prompt }] });
    expect(out).toEqual(offlineConsolidate({ model: "m", messages: [{ role: "user", content: prompt }] }));
    const parsed = parseConsolidationOutput(out);
    expect(parsed.updated_scaffold).toEqual({ Preferences: ["User likes tea", "User prefers short emails"], Role: "CTO" });
    // The stand-in's keys (offline-keys.ts): the profile key's attribute, and the move's; a preference has none.
    expect(parsed.facts_to_embed).toEqual([
      { text: "User prefers short emails", confidence: 0.7 },
      { text: "User works as a CTO", confidence: 0.7, key: "user.occupation" },
      { text: "User moved to Paris", confidence: 0.9, key: "user.home_city" },
    ]);
    expect(parsed.updated_working_memory).toMatch(/offline consolidation/);
  });

  it("makes one fact of a statement and the profile key it filled, unless the statement's fact does not say it", () => {
    const factsOf = (observations: { type: string; content: string }[]) =>
      parseConsolidationOutput(
        offlineConsolidate({
          model: "m",
          messages: [
            {
              role: "user",
              content: consolidationPrompt({
                working_memory: "",
                scaffold: {},
                related_facts: [],
                known_keys: [],
                observations: observations.map((o, i) => ({ id: `e${i}`, ...o, source: {} })),
              }),
            },
          ],
        }),
      ).facts_to_embed.map((f) => (typeof f === "string" ? f : f.text));
    expect(
      factsOf([
        { type: "fact", content: "I live in Lisbon" },
        { type: "scaffold_update", content: '{"Location": "Lisbon"}' },
      ]),
    ).toEqual(["User lives in Lisbon"]);
    expect(factsOf([{ type: "scaffold_update", content: '{"Location": "Lisbon"}' }])).toEqual(["User lives in Lisbon"]);
    expect(
      factsOf([
        { type: "fact", content: "Call me Bob" },
        { type: "scaffold_update", content: '{"Name": "Bob"}' },
      ]),
    ).toContain("User's name is Bob");
    expect(factsOf([{ type: "scaffold_update", content: '{"favourite_colour": "teal", "GitHub": "ana-dev"}' }])).toEqual([
      "User's favourite colour is teal",
      "User's GitHub is ana-dev",
    ]);
  });

  it("consolidates end to end through the offline model, superseding by the key it names", async () => {
    const u = await createUser();
    await observe(u.id, [{ type: "fact", content: "I live in Berlin" }]);
    const offline = {
      client: createModelClient({ ...loadConfig(env), anthropicApiKey: undefined }, { [CONSOLIDATION_FORMAT]: offlineConsolidate }).client,
      model: "offline",
    };
    const { deps } = await captured(u.id);
    expect((await consolidateUser(deps, offline, u.id)).status).toBe("applied");
    await observe(u.id, [{ type: "correction", content: "I moved to Paris" }]);
    expect((await consolidateUser(deps, offline, u.id)).status).toBe("applied");
    expect((await search(u.key, "where does the user live")).results.map((r) => r.text)).toEqual(["User moved to Paris"]);
    const working = await getJson<{ working_memory: string }>(u.key, "/v1/memory/working");
    expect(working.working_memory).toContain("- User lives in Berlin\n- User moved to Paris");
  });
});
