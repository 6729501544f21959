/**
 * How a question about the present is read: its present-tense cues ("at this point", "most recently", "where did I
 * end up"), the cue's own words kept out of the full-text query ("right now" is not about "Right, I'm here"), and
 * open-world supersession taking only candidates found by what they say. Statements are invented, not corpus text.
 */
import { describe, expect, it } from "vitest";
import { namesIn, supersedeOpen } from "../src/memory/open-supersede";
import { phrasalParticles, planSearch } from "../src/memory/ranking";
import type { Candidate } from "../src/memory/search-types";
import { stem } from "../src/memory/text";
import { cueWords, timeCues } from "../src/memory/when";
import { createUser } from "./helpers";
import { getJson, importFacts, rankedFact } from "./memory-helpers";

const NOW = Date.UTC(2025, 5, 1);
const plan = (query: string) => planSearch({ userId: "u", query, k: 10, connectionIds: [] }, NOW);

describe("present-tense cues", () => {
  it("reads more ways of asking about now", () => {
    for (const q of [
      "Which laptop is mine at this point?",
      "Which car did I buy most recently?",
      "Where did I end up working?",
      "Who have I been seeing lately?",
      "What do I drive presently?",
    ])
      expect(timeCues(q, NOW), q).toMatchObject({ current: true, past: false });
    // A history question stays one.
    expect(timeCues("Which car did I drive before?", NOW)).toMatchObject({ current: false, past: true });
  });

  it("takes the words of every cue in the question, not only the first", () => {
    const q = "Where is my current savings account these days?";
    expect(cueWords(q, timeCues(q, NOW))).toEqual(["current", "these", "days"]);
  });

  it("keeps the cue's words out of the full-text query, unless nothing else is left", () => {
    expect(plan("Am I remote or in the office right now?").terms).toEqual(["remote", "office"]);
    expect(plan("Who cuts my hair these days?").terms).toEqual(["cuts", "hair"]);
    expect(plan("Which choir am I in at this point?").terms).toEqual(["choir"]);
    // Only cue words: searching for them is all the full text can do.
    expect(plan("What about right now?").terms).toEqual(["right"]);
  });

  it("searches a phrasal verb's particle when the question asks about now ('wake up' and 'get up' share only it)", () => {
    expect(phrasalParticles("What time do I wake up on weekdays now?")).toEqual(["up"]);
    expect(phrasalParticles("Which habit did I give up?")).toEqual(["up"]);
    expect(phrasalParticles("Did we walk up the hill?")).toEqual([]);
    expect(plan("What time do I wake up on weekdays now?").terms).toEqual(["time", "wake", "weekdays", "up"]);
    // Not in other questions: "up" would match every line with it for a question about growing up.
    expect(plan("Where did I grow up?").terms).toEqual(["grow"]);
  });
});

describe("open-world supersession takes only candidates found by what they say", () => {
  const OLD = "Our team moved to the fourth floor, three desks by the window.";
  // Found only through the question's function words (the fill list), and linked to OLD by "three" alone.
  const NOISE = "I'm dating someone new now, three weeks in.";
  const NEW = "The team is on the ground floor now, we left the fourth floor in May.";
  const order = (ranked: { c: Candidate; score: number }[], evidence?: (c: Candidate) => boolean) =>
    supersedeOpen(ranked, { questionStems: new Set(["floor"].map(stem)), eventOf: (c) => c.event_at ?? c.created_at, evidence }).map((x) => x.c.text);

  it("a fill-only hit neither replaces a statement nor is replaced", () => {
    const ranked = [rankedFact(OLD, 10), rankedFact("The lift is broken again.", 20), rankedFact(NOISE, 90)];
    // Without the evidence check the unrelated line is taken for OLD's replacement.
    expect(order(ranked)[0]).toBe(NOISE);
    const found = new Set([ranked[0]?.c.id, ranked[1]?.c.id]);
    expect(order(ranked, (c) => found.has(c.id))).toEqual([OLD, "The lift is broken again.", NOISE]);
  });

  it("a later statement found by its words still replaces the earlier one", () => {
    const ranked = [rankedFact(OLD, 10), rankedFact("The lift is broken again.", 20), rankedFact(NEW, 90), rankedFact(NOISE, 95)];
    const found = new Set([ranked[0]?.c.id, ranked[1]?.c.id, ranked[2]?.c.id]);
    expect(order(ranked, (c) => found.has(c.id))[0]).toBe(NEW);
  });
});

describe("a fill hit replaces a statement only through a name or a distinctive word both share", () => {
  it("reads capitalised names, not sentence openings, 'I' or the calendar", () => {
    expect([...namesIn("Handed in the keys, we're off to Ghent in May. Our address is Ghent now, says Dr Okafor on Monday.")]).toEqual([
      "ghent",
      "dr",
      "okafor",
    ]);
  });

  const PLAN = "Handed in notice on the flat, we're off to Ghent at the end of the month.";
  // Shares no word with the question: found only by the fill list.
  const ADDRESS = "Our address is officially Ghent now, the post finally arrives.";
  const order = (ranked: { c: Candidate; score: number }[], found: Set<string | undefined>) =>
    supersedeOpen(ranked, {
      questionStems: new Set(["flat", "home"].map(stem)),
      eventOf: (c) => c.event_at ?? c.created_at,
      evidence: (c) => found.has(c.id),
    }).map((x) => x.c.text);

  it("moves a later fill hit that names the same place above the statement", () => {
    const ranked = [rankedFact(PLAN, 10), rankedFact("The flat upstairs is noisy.", 20), rankedFact(ADDRESS, 40)];
    expect(order(ranked, new Set([ranked[0]?.c.id, ranked[1]?.c.id]))[0]).toBe(ADDRESS);
  });

  it("or a distinctive word beyond the question's ('tax adviser'), but not a count or a unit of time", () => {
    const job = "Day job: tax adviser at Brightwell, lots of spreadsheets.";
    const signed = "Signed the contract today, I'm their new tax adviser from next month.";
    const ranked = [rankedFact(job, 10), rankedFact("Work was long, three meetings.", 20), rankedFact(signed, 40)];
    const found = new Set([ranked[0]?.c.id, ranked[1]?.c.id]);
    const reorder = (list: typeof ranked) =>
      supersedeOpen(list, { questionStems: new Set(["job"]), eventOf: (c) => c.event_at ?? c.created_at, evidence: (c) => found.has(c.id) });
    expect(reorder(ranked)[0]?.c.text).toBe(signed);
    // Linked to the anchor by "three" alone, a later fill hit stays where it is.
    const counted = [rankedFact("Day job: three meetings a week, no more.", 10), rankedFact("I'm seeing someone new now, three weeks in.", 40)];
    found.add(counted[0]?.c.id);
    expect(reorder(counted)[0]?.c.text).toBe("Day job: three meetings a week, no more.");
  });

  it("does not for a fill hit that shares only a common word", () => {
    const other = "Our address book is a mess now, at the end of the month I'll sort it.";
    const ranked = [rankedFact(PLAN, 10), rankedFact("The flat upstairs is noisy.", 20), rankedFact(other, 40)];
    expect(order(ranked, new Set([ranked[0]?.c.id, ranked[1]?.c.id]))[0]).toBe(PLAN);
  });
});

describe("a present-tense question through the search API", { timeout: 60_000 }, () => {
  it("does not match the cue's own words ('right now' is not 'Right, ...')", async () => {
    const u = await createUser();
    const turn = (text: string, date: string) => ({ text, metadata: { date, role: "user", session_id: date } });
    await importFacts(u.key, [turn("Luca on Mill Street cuts my hair, every five weeks.", "2024-02-01")]);
    await importFacts(u.key, [turn("I switched barbers, Dimitri near the station cuts my hair now.", "2024-09-15")]);
    await importFacts(u.key, [turn("Right, I'm back.", "2025-01-10"), turn("Right, let's do this.", "2025-01-11")]);
    const body = await getJson<{ results: { text: string }[] }>(u.key, `/v1/memory/facts/search?q=${encodeURIComponent("Who cuts my hair right now?")}&k=5`);
    const texts = body.results.map((r) => r.text);
    expect(texts[0]).toBe("I switched barbers, Dimitri near the station cuts my hair now.");
    // Found by the fill only (a search returns k when the user has k facts), under both statements about hair.
    expect(texts.indexOf("Right, I'm back.")).not.toBe(1);
    expect(texts[1]).toBe("Luca on Mill Street cuts my hair, every five weeks.");
  });
});
