import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import { capWords, wordCount } from "../src/lib/text";
import { thirdPerson } from "../src/lib/third-person";
import { consolidateUser } from "../src/memory/consolidate";
import { CONSOLIDATION_FORMAT, consolidationPrompt, mergeScaffold, normalizeJson, parseConsolidationOutput } from "../src/memory/consolidation-schema";
import { dot, hashEmbed } from "../src/memory/embed";
import { canonicalJson, uuidv5 } from "../src/memory/ids";
import { offlineConsolidate } from "../src/memory/offline-consolidate";
import { fitScaffold } from "../src/memory/providers";
import { backoffSeconds } from "../src/memory/queue";
import { matchOf, planSearch } from "../src/memory/ranking";
import { ftsQuery, quality } from "../src/memory/retrieval";
import { askedSlot, questionSlot } from "../src/memory/slot-questions";
import { slotOf } from "../src/memory/slots";
import { stem } from "../src/memory/text";
import { MAX_TOMBSTONES, pruneTombstones } from "../src/memory/tiers";
import { createModelClient } from "../src/model/anthropic";
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
    expect(ftsQuery('What is "NEAR" the AND office?')).toBe('"near" OR "office"');
    expect(ftsQuery("the and of")).toBeNull();
  });
});

describe("slots (contradiction detection)", () => {
  const cases: [string, string | null][] = [
    ["User lives in Berlin", "user|live_in"],
    ["User moved to Paris.", "user|live_in"],
    ["My sister lives in Rome", "sister|live_in"],
    ["User works at Acme", "user|work_at"],
    ["User's favorite color is blue", "user|favourite color"],
    ["Green is my favourite colour now.", "user|favourite colour"],
    ["My sister's favourite colour is red", "sister favourit colour|is"],
    ["The default Jira project is PROJ", "default jira project|is"],
    ["Default Jira project: OPS", "default jira project|is"],
    ["Project Apollo is due in March", "project apollo|is due"],
    ["Project Apollo is written in Rust", "project apollo|is written"],
    ["User is a vegetarian", "user|diet"],
    ["Python is fun", null],
    ["User likes tea", null],
    // First-person conversation turns: the user's changing attributes, whoever else is named.
    ["Big news: we're moving to Porto next month, the flat is full of boxes.", "user|live_in"],
    ["Finally settled into our new place in Ghent.", "user|live_in"],
    ["The last boxes are unpacked, Ghent finally feels like home.", "user|live_in"],
    ["My best friend Sam moved to Leeds for a research job.", "best friend sam|live_in"],
    ["Sam moved to Leeds last year.", "sam|live_in"],
    ["I work as a data analyst at Northwind, mostly spreadsheets.", "user|work_at"],
    ["Signed the contract with Quarry Labs today!", "user|work_at"],
    ["I met Felix at a friend's barbecue and we've been dating for a month.", "user|partner"],
    ["Felix and I called it off.", "user|partner"],
    ["My sister got engaged to Rafael!", "sister|partner"],
    ["Which city do I live in now?", null],
    ["I ended up working from a cafe.", null],
    ["I grew up in a fishing village.", null],
    // Where the user trains, which phone they have, what they drink: the value named, a lasting state.
    ["I train at Ironworks three times a week, mostly weights.", "user|gym"],
    ["I cancelled my membership and joined FlexHouse instead, it's closer and cheaper.", "user|gym"],
    ["Joined a new climbing gym near the office.", "user|gym"],
    ["User trains at Peak Fitness", "user|gym"],
    ["My Pixel 6 is on its last legs, the battery dies by lunchtime.", "user|phone"],
    ["I upgraded to the iPhone 15 and the camera is unreal.", "user|phone"],
    ["My new phone is a Fairphone 5.", "user|phone"],
    ["My sister's iPhone 12 keeps crashing.", "sister|phone"],
    ["I'm a black coffee person, three cups before noon.", "user|drink"],
    ["I've switched to green tea completely.", "user|drink"],
    ["I drink decaf after lunch.", "user|drink"],
    ["These days my morning drink is matcha.", "user|drink"],
    ["My dad only drinks espresso.", "dad|drink"],
    // ...and what does not say which one, or is not the user's current state.
    ["I keep scrolling on my phone until 1am.", null],
    ["My phone died on the train.", null],
    ["Zoomed in until you could see each pixel.", null],
    ["I'm thinking about switching to the Pixel 8.", null],
    ["I keep forgetting to drink water during the day.", null],
    ["Grabbing a coffee with Sam later.", null],
    ["The coffee shop by the station does great pastries.", null],
    ["I used to train at Ironworks.", null],
    ["Tried a drop-in class at Peak Fitness while visiting Sam.", null],
    ["We went swimming at the lido on holiday.", null],
    ["My Netflix membership renews on Friday.", null],
    ["I lived in Rome as a student.", null],
    ["We might move to Porto next year.", null],
    // A sentence that opens with a verb has the user as its subject, not a name.
    ["Transferred my membership over to Peak Fitness, it's a five minute walk from the flat.", "user|gym"],
    ["Moved to Leeds in the spring, still finding my way around.", "user|live_in"],
    // A change statement naming a value of an attribute's kind states that attribute, without a cue of its own.
    ["These days the first thing I have is matcha, I've dropped the old habit.", "user|drink"],
    ["Got rid of the old one, the Pixel 8 is what I carry now.", "user|phone"],
    ["My sister's on rooibos now.", null],
    ["I'm thinking about matcha instead.", null],
    ["I used to drink espresso, now I don't.", null],
    ["The pixel art on the poster is lovely now.", "pixel art poster|is"],
    ["Home is Utrecht now, we got the keys on Friday.", "user|live_in"],
    ["My home is a mess now.", "home|is"],
    ["On Monday I begin as lead copywriter at Basalt Software.", "user|work_at"],
    ["I've got a new girlfriend, Noemi, we met at a climbing wall.", "user|partner"],
    ["It's over with Ravi. We want different things.", "user|partner"],
    // A thing named as replaced or new is its own attribute, whatever it is.
    ["Sold the old car and bought a Ford Fiesta, so quiet on the motorway.", "user|car"],
    ["I've lost interest in my old hobby, it's pottery now every weekend.", "user|hobby"],
    ["The new phone arrived: the Pixel 8.", "user|phone"],
    ["My old phone is in a drawer somewhere.", "old phone|is"],
    ["Sam bought the new Pixel 9 last week.", "sam|phone"],
    ["My old friend Ravi is visiting.", "old friend ravi|is"],
    ["My new desk neighbour Sam brings homemade kimchi every Friday.", null],
    // The things people change, in the everyday ways they say so: car, diet, commute, volunteering, hobby, course, team.
    ["I sold the Corolla and drive an EV now.", "user|car"],
    ["My Ford needs new tyres before winter.", "user|car"],
    ["We leased a little electric hatchback in March.", "user|car"],
    ["My dad still drives the Volvo he bought in 2009.", "dad still|car"],
    ["The car park at work is full by eight.", "car park work|is full"],
    ["Ford the river at the shallow end.", null],
    ["I went vegan after watching that documentary.", "user|diet"],
    ["Since January I eat gluten-free, my stomach is much calmer.", "user|diet"],
    ["I'm on a strict low-carb diet until the wedding.", "user|diet"],
    ["I made a vegan lasagne for the party.", null],
    ["The new place downstairs is vegetarian.", "new place downstair|is"],
    ["I cycle to work most days now.", "user|commute"],
    ["These days I get in by train, the roads are hopeless.", "user|commute"],
    ["I take the bus to work when it rains.", "user|commute"],
    ["Traffic was a nightmare, took me an hour to get in.", null],
    ["I volunteer with a literacy charity on Wednesdays.", "user|volunteer"],
    ["Sunday mornings I help out at the soup kitchen.", "user|volunteer"],
    ["My spare time goes into restoring old radios.", "user|hobby"],
    ["My new hobby is sourdough baking.", "user|hobby"],
    ["I've signed up for a part-time masters in statistics.", "user|study"],
    ["I'm doing a night school course in plumbing.", "user|study"],
    ["Tried a spin class at the gym, never again.", null],
    ["They've moved me to the data platform team, which is a nice change.", "user|thing team"],
    ["I'm on the night shift crew at the depot.", "user|thing crew"],
    ["My sister is on the hockey team.", "sister|is"],
    ["New routine: green tea first thing, nothing else until lunch.", "user|drink"],
    ["New routine for Sam: matcha first thing.", "new routin sam|is"],
    ["Switched to oat lattes, the dairy was not agreeing with me.", "user|drink"],
    ["My mornings run on rooibos, no milk.", "user|drink"],
    ["Got myself a second-hand VW Polo.", "user|car"],
    ["I stopped eating meat in January.", "user|diet"],
    ["I take the train into the city each morning.", "user|commute"],
    ["I've just started at a new agency in town.", "user|work_at"],
    // Not single-valued, so never a slot: one takes up many things, and keeps more than one pet.
    ["I've taken up the harp, my teacher comes on Tuesdays.", null],
    ["We adopted a rescue greyhound called Pip.", null],
    // One day, the future, or someone else's group is no lasting state of the user's.
    ["I'm driving the rental car this week.", null],
    ["I'm taking the bus to work tomorrow, the bike has a flat.", null],
    ["I'm volunteering at the school fair tomorrow.", null],
    ["I'll eat vegan at the party.", null],
    ["I'm in the pub with the team.", null],
    ["I joined the team for lunch.", null],
    ["I joined the data team in March.", "user|thing team"],
    ["Our old dog passed away in the spring and we got a kitten.", "user|pet"],
    ["Meet the newest member of the family: a beagle puppy called Rolo.", "meet newest member famili|is"],
  ];
  for (const [text, slot] of cases) it(`${text} -> ${slot}`, () => expect(slotOf(text)).toBe(slot));

  const questions: [string, string | null][] = [
    ["Where am I based these days?", "user|live_in"],
    ["Where's home for me now?", "user|live_in"],
    ["Who is my current employer?", "user|work_at"],
    ["Where do I work out these days?", "user|gym"],
    ["Which gym am I a member of now?", "user|gym"],
    ["What phone do I have now?", "user|phone"],
    ["What's my phone number?", null],
    ["What's my go-to morning drink now?", "user|drink"],
    ["What did I drink at the wedding?", null],
    ["What did I drink before?", "user|drink"],
    ["What phone did I have before the current one?", "user|phone"],
    ["Which gym did I use to go to?", "user|gym"],
    ["What car do I drive now?", "user|car"],
    ["What's my hobby these days?", "user|hobby"],
    ["What car did I have before the current one?", "user|car"],
    ["What car does my dad drive now?", null],
    ["Which book did I finish?", null],
    ["What's my favourite colour?", "user|favourite colour"],
    ["Which phone does my sister have?", null],
    ["Who am I seeing at the moment?", null],
    ["Am I seeing anyone at the moment?", "user|partner"],
    ["Who's my boyfriend now?", "user|partner"],
    ["Where does my sister live?", null],
    ["What is the capital of France?", null],
    ["Help me plan a workout I can do at home", null],
    ["where does the user live", "user|live_in"],
    // The attribute the question names, however it is asked.
    ["What do I drive these days?", "user|car"],
    ["What did I drive before?", "user|car"],
    ["Which used car do I drive?", "user|car"],
    ["How do I get to work now?", "user|commute"],
    ["How did I use to commute?", "user|commute"],
    ["What diet am I on at the moment?", "user|diet"],
    ["How do I eat these days?", "user|diet"],
    ["Where do I volunteer now?", "user|volunteer"],
    ["What do I spend my weekends doing now?", "user|hobby"],
    ["What am I studying at the moment?", "user|study"],
    ["Where do I go to train these days?", "user|gym"],
    ["Who am I going out with now?", "user|partner"],
    ["What's my current partner's name?", "user|partner"],
    ["What's in my mug every morning now?", "user|drink"],
    ["What's my go-to morning drink now?", "user|drink"],
    ["Which team am I on at work now?", "user|thing team"],
    ["Which team was I on before the reorg?", "user|thing team"],
    ["What's my cousin's wife called?", null],
    ["What's my father's old car?", null],
    ["What time does my train leave?", null],
    ["What's my diet like now?", "user|diet"],
    ["Am I vegetarian?", "user|diet"],
    ["Which school am I at now?", "user|study"],
    ["Where am I training these days?", "user|gym"],
    ["Which job did I have before this one?", "user|work_at"],
    ["What pet do I have now?", "user|pet"],
    ["What's my dog's name?", null],
    ["Which team do I support these days?", null],
  ];
  for (const [q, slot] of questions) it(`question ${q} -> ${slot}`, () => expect(questionSlot(q)).toBe(slot));

  it("scores the match of an attribute's statement by the words that named the attribute, without time words", () => {
    expect(askedSlot("Which smartphone am I using at the moment?")).toEqual({ slot: "user|phone", words: ["smartphone"] });
    const plan = planSearch({ userId: "u", query: "Which smartphone am I using at the moment?", k: 5, connectionIds: [] }, Date.UTC(2025, 0, 1));
    // "moment" asks when, not what: it is not a word a fact should contain.
    expect([...plan.stems.keys()].sort()).toEqual(["smartphon", "us"]);
    const weights = new Map([...plan.stems.keys()].map((s) => [s, 1]));
    const statement = "I upgraded to the iPhone 15 and the camera is unreal.";
    expect(matchOf(weights, statement)).toBe(0);
    expect(matchOf(weights, statement, new Map(), plan.slotStems)).toBe(0.5);
    // A question's period is answered by a fact's event time, not by its words.
    const trip = planSearch({ userId: "u", query: "Where did I go on holiday in February 2024?", k: 5, connectionIds: [] }, Date.UTC(2025, 0, 1));
    expect([...trip.periodStems].sort()).toEqual(["2024", "februari"]);
  });
});

describe("consolidation output", () => {
  it("normalises stringified JSON recursively and leaves other strings alone", () => {
    expect(normalizeJson({ a: '{"b": "[1, 2]"}', c: "{not json", d: "plain" })).toEqual({ a: { b: [1, 2] }, c: "{not json", d: "plain" });
    const out = parseConsolidationOutput('{"updated_scaffold": "{\\"X\\": 1}", "updated_working_memory": "[a narrative]", "facts_to_embed": "[]"}');
    expect(out).toEqual({ updated_scaffold: { X: 1 }, updated_working_memory: "[a narrative]", facts_to_embed: [] });
    expect(() => parseConsolidationOutput(["nope"])).toThrow(/not an object/);
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

  it("ranks recalled, confident, fresh facts up and stale unrecalled ones down", () => {
    const now = Date.now();
    const day = 86_400_000;
    const base = { confidence: 0.7, recall_count: 0, last_recalled_at: null, created_at: now };
    expect(quality({ ...base, recall_count: 5 }, now)).toBeGreaterThan(quality(base, now));
    expect(quality({ ...base, confidence: 0.95 }, now)).toBeGreaterThan(quality(base, now));
    expect(quality({ ...base, created_at: now - 365 * day }, now)).toBeLessThan(quality(base, now));
    expect(quality({ ...base, created_at: now - 365 * day, last_recalled_at: now - day }, now)).toBeGreaterThan(
      quality({ ...base, created_at: now - 365 * day }, now),
    );
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

  it("answers the consolidation structured output deterministically from the prompt", () => {
    const prompt = consolidationPrompt({
      working_memory: "",
      scaffold: { Preferences: ["User likes tea"] },
      related_facts: [],
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
    expect(parsed.facts_to_embed).toEqual([
      { text: "User prefers short emails", confidence: 0.7 },
      { text: "User works as a CTO", confidence: 0.7 },
      { text: "User moved to Paris", confidence: 0.9 },
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

  it("consolidates end to end through the offline model, superseding by slot", async () => {
    const u = await createUser();
    await observe(u.id, [{ type: "fact", content: "I live in Berlin" }]);
    const offline = {
      client: createModelClient({ ...loadConfig(env), anthropicApiKey: undefined }, { [CONSOLIDATION_FORMAT]: offlineConsolidate }).client,
      model: "offline",
    };
    const { deps } = captured();
    expect((await consolidateUser(deps, offline, u.id)).status).toBe("applied");
    await observe(u.id, [{ type: "correction", content: "I moved to Paris" }]);
    expect((await consolidateUser(deps, offline, u.id)).status).toBe("applied");
    expect((await search(u.key, "where does the user live")).results.map((r) => r.text)).toEqual(["User moved to Paris"]);
    const working = await getJson<{ working_memory: string }>(u.key, "/v1/memory/working");
    expect(working.working_memory).toContain("- User lives in Berlin\n- User moved to Paris");
  });
});
