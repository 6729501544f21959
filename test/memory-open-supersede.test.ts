/**
 * Changing facts of kinds no slot knows (an internet provider, a barber, a choir): asked about the present, the
 * later statement that announces a change ranks above the earlier statement it replaces, found through the HTTP
 * search API; the ordering rule itself (open-supersede.ts) on hand-made candidates.
 */
import { describe, expect, it } from "vitest";
import { announcesChange, supersedeOpen } from "../src/memory/open-supersede";
import type { Candidate } from "../src/memory/search-types";
import { slotOf } from "../src/memory/slots";
import { stem } from "../src/memory/text";
import { createUser } from "./helpers";
import { getJson, importFacts, rankedFact } from "./memory-helpers";

const order = (ranked: { c: Candidate; score: number }[], question: string[]) =>
  supersedeOpen(ranked, { questionStems: new Set(question.map(stem)), eventOf: (c) => c.event_at ?? c.created_at }).map((x) => x.c.text);

describe("open-world supersession (pure)", () => {
  const OLD = "Our broadband is with Fibrelink, it drops every evening.";
  const NEW = "We swapped the broadband to Nordwave in March, no dropouts since.";

  it("ranks a later linked statement that announces a change above the earlier one, and moves nothing else", () => {
    const ranked = [
      rankedFact(OLD, 10),
      rankedFact("The router blinks green all night.", 50),
      rankedFact(NEW, 90),
      rankedFact("I keep a spare charger in my bag.", 95),
    ];
    // The later statement takes the earlier one's place, just above it; the others keep their order.
    expect(order(ranked, ["broadband"])).toEqual([NEW, OLD, "The router blinks green all night.", "I keep a spare charger in my bag."]);
    // And at least its score, so sorting by score keeps that order; the others keep theirs.
    const scores = supersedeOpen(ranked, { questionStems: new Set([stem("broadband")]), eventOf: (c) => c.event_at ?? c.created_at }).map((x) => x.score);
    expect(scores).toEqual([ranked[0]?.score, ranked[0]?.score, ranked[1]?.score, ranked[3]?.score]);
  });

  it("links two statements through a distinctive word they share even when the question names neither", () => {
    const ranked = [
      rankedFact("My piano teacher is Mrs Okafor, lessons on Thursdays.", 5),
      rankedFact("Started with a new piano teacher, Mr Lindqvist, still Thursdays.", 60),
    ];
    expect(order(ranked, ["lesson", "music"])[0]).toBe("Started with a new piano teacher, Mr Lindqvist, still Thursdays.");
  });

  it("leaves the order alone when the later statement announces no change, was said earlier, or is not linked", () => {
    const a = [rankedFact(OLD, 10), rankedFact("Nordwave sent a leaflet about broadband deals.", 90)];
    expect(order(a, ["broadband"])).toEqual([OLD, "Nordwave sent a leaflet about broadband deals."]);
    const b = [rankedFact(OLD, 90), rankedFact(NEW, 10)];
    expect(order(b, ["broadband"])).toEqual([OLD, NEW]);
    const c = [rankedFact(OLD, 10), rankedFact("I switched to oat milk, so much better.", 90)];
    expect(order(c, ["broadband"])).toEqual([OLD, "I switched to oat milk, so much better."]);
  });

  it("never lets the assistant's turn or a question replace a statement", () => {
    const ranked = [
      rankedFact(OLD, 10),
      rankedFact("Nice, Nordwave is a new broadband option for you!", 90, "assistant"),
      rankedFact("Should I switch broadband now?", 91),
    ];
    expect(order(ranked, ["broadband"])[0]).toBe(OLD);
  });

  it("reads change markers generically", () => {
    expect(announcesChange("I no longer sing with the Tuesday choir")).toBe(true);
    expect(announcesChange("These days my barber is Dimitri")).toBe(true);
    expect(announcesChange("My barber is Luca on Mill Street")).toBe(false);
  });
});

type Hit = { text: string; score: number };
const find = (key: string, q: string) => getJson<{ results: Hit[] }>(key, `/v1/memory/facts/search?q=${encodeURIComponent(q)}&k=10`);
const turn = (text: string, date: string) => ({ text, metadata: { date, role: "user", session_id: date } });

describe("open-world supersession through the search API", { timeout: 60_000 }, () => {
  const OLD = "I get my hair cut by Luca, the barber on Mill Street, every five weeks.";
  const NEW = "I switched barbers, Dimitri near the station does my hair now.";
  const CHOIR_OLD = "I sing bass in the Tuesday choir at St Brigid's.";
  const CHOIR_NEW = "I've joined the harbour choir instead, rehearsals on Wednesdays.";

  it("puts the current statement of an attribute no slot knows first when asked about now, and keeps the history findable", async () => {
    // No slot reads these kinds: nothing is superseded on import, both stay live.
    expect([OLD, NEW, CHOIR_OLD, CHOIR_NEW].map(slotOf)).toEqual([null, null, null, null]);
    const u = await createUser();
    await importFacts(u.key, [turn(OLD, "2024-02-01"), turn(CHOIR_OLD, "2024-02-01"), turn("The coffee at the station is awful.", "2024-03-10")]);
    const later = await importFacts(u.key, [turn(NEW, "2024-09-15"), turn(CHOIR_NEW, "2024-09-20")]);
    expect(later.superseded).toEqual([]);

    const found = (await find(u.key, "Which barber cuts my hair these days?")).results;
    const barber = found.map((r) => r.text);
    expect(barber.indexOf(NEW)).toBeGreaterThanOrEqual(0);
    expect(barber.indexOf(NEW)).toBeLessThan(barber.indexOf(OLD));
    // A client that sorts by score keeps that order: the moved statement scores at least what it replaced.
    const scores = found.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    const choir = (await find(u.key, "Which choir do I sing in now?")).results.map((r) => r.text);
    expect(choir.indexOf(CHOIR_NEW)).toBeGreaterThanOrEqual(0);
    expect(choir.indexOf(CHOIR_NEW)).toBeLessThan(choir.indexOf(CHOIR_OLD));
    // Asked without "now", relevance decides: the earlier, closer match is not pushed down.
    const plain = (await find(u.key, "Who is the barber on Mill Street?")).results.map((r) => r.text);
    expect(plain[0]).toBe(OLD);
  });
});
