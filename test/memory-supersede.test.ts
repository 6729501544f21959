/**
 * Changing facts beyond where the user lives and works: a newer statement keyed with the same attribute (the gym
 * they train at, the phone they have, what they drink) supersedes the older one; the old one stays as history;
 * statements keyed as someone else's attribute, or with no key (a visit, a mention), replace nothing. The keys are
 * given as a caller (or the consolidation model) that knows what each line says would give them; search then has
 * to find the current statement by the question's words.
 */
import { describe, expect, it } from "vitest";
import { createUser } from "./helpers";
import { getJson, importFacts } from "./memory-helpers";

type Hit = { id: string; text: string; superseded_by: string | null };
type Body = { results: Hit[] };
const find = (key: string, q: string, extra = "") => getJson<Body>(key, `/v1/memory/facts/search?q=${encodeURIComponent(q)}&k=10${extra}`);
const texts = (b: Body) => b.results.map((r) => r.text);
const turn = (text: string, date: string, key?: string) => ({ text, ...(key ? { key } : {}), metadata: { date, role: "user", session_id: date } });

const GYM_OLD = "I train at Ironworks three times a week, mostly weights.";
const GYM_NEW = "I cancelled my membership and joined the FlexHouse gym instead, it's closer and cheaper.";

describe("supersession of changing attributes", { timeout: 60_000 }, () => {
  it("puts the newer gym first, keeps the older as history, and finds it when asked about the past", async () => {
    const u = await createUser();
    const [old] = (await importFacts(u.key, [turn(GYM_OLD, "2024-02-01", "user.gym")])).facts;
    const later = await importFacts(u.key, [turn(GYM_NEW, "2024-07-15", "user.gym")]);
    const [current] = later.facts;
    expect(later.superseded).toEqual([old?.id]);

    // The old statement is not among the results, even for a question that shares more of its words.
    const now = await find(u.key, "Which gym do I train at?");
    expect(now.results[0]?.text).toBe(GYM_NEW);
    expect(texts(now)).not.toContain(GYM_OLD);

    // History is not lost: a search for history, the fact itself and the listing all show it, marked replaced.
    const before = await find(u.key, "Which gym did I train at before?", "&history=true");
    expect(before.results.find((r) => r.text === GYM_OLD)?.superseded_by).toBe(current?.id);
    const fact = await getJson<{ replaced: Hit[]; replaced_by: Hit | null }>(u.key, `/v1/memory/facts/${current?.id}`);
    expect(fact.replaced.map((f) => f.text)).toEqual([GYM_OLD]);
    const listed = await getJson<{ facts: Hit[] }>(u.key, "/v1/memory/facts?include_superseded=true");
    expect(listed.facts.find((f) => f.id === old?.id)?.superseded_by).toBe(current?.id);
  });

  it("makes an older statement imported late history at once, and keeps phones and drinks apart", async () => {
    const u = await createUser();
    await importFacts(u.key, [turn("I upgraded to the iPhone 15 and the camera is unreal.", "2025-03-01", "user.phone")]);
    const late = await importFacts(u.key, [
      turn("My Pixel 6 is on its last legs, the battery dies by lunchtime.", "2024-05-01", "user.phone"),
      turn("I'm a black coffee person, three cups before noon.", "2024-05-01", "user.morning_drink"),
    ]);
    // The old phone is history the moment it arrives; the drink, another attribute, is untouched.
    expect(late.superseded).toEqual([late.facts[0]?.id]);
    expect((await find(u.key, "What phone do I have now?")).results[0]?.text).toBe("I upgraded to the iPhone 15 and the camera is unreal.");
    await importFacts(u.key, [turn("I've switched to green tea completely, my sleep is so much better.", "2025-04-01", "user.morning_drink")]);
    const drink = await find(u.key, "What's my go-to morning drink now?");
    expect(drink.results[0]?.text).toBe("I've switched to green tea completely, my sleep is so much better.");
    expect(texts(drink)).not.toContain("I'm a black coffee person, three cups before noon.");
  });

  it("lets a statement dated the same day as the current one of its key replace it: the later write wins a tie", async () => {
    const u = await createUser();
    const [first] = (await importFacts(u.key, [turn(GYM_OLD, "2024-07-15", "user.gym")])).facts;
    const later = await importFacts(u.key, [turn(GYM_NEW, "2024-07-15", "user.gym")]);
    expect(later.superseded).toEqual([first?.id]);
    const live = await getJson<{ facts: Hit[] }>(u.key, "/v1/memory/facts");
    expect(live.facts.map((f) => f.text)).toEqual([GYM_NEW]);
    expect((await find(u.key, "Which gym do I train at?")).results[0]?.text).toBe(GYM_NEW);
  });

  it("lets a newer change statement without any slot outrank an older statement of the same thing", async () => {
    const u = await createUser();
    await importFacts(u.key, [turn("I get up at six every day, even on weekends.", "2024-01-05")]);
    await importFacts(u.key, [turn("These days I get up at half seven, I've given up on early starts.", "2024-08-05")]);
    const now = await find(u.key, "When do I get up now?");
    expect(now.results[0]?.text).toBe("These days I get up at half seven, I've given up on early starts.");
    expect(texts(now)).toContain("I get up at six every day, even on weekends.");
  });
});
