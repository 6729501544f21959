/**
 * Supersession is decided by whoever knows: the consolidation model's key and supersedes ids, through the real
 * queue with the fake model, in any language; facts about someone else, or a fact without a key, replace nothing;
 * and a verbatim import of a conversation replaces nothing at all.
 */
import { describe, expect, it } from "vitest";
import { parseConsolidationPrompt } from "../src/memory/consolidation-schema";
import { createUser, script, seen } from "./helpers";
import { consolidation, deliver, getJson, importFacts, observe } from "./memory-helpers";

type Fact = { id: string; text: string; key: string | null; superseded_by: string | null };
type Item = { text: string; key?: string; supersedes?: string[] };

/** One consolidation through the queue, the fake model answering with these facts. */
async function consolidate(userId: string, said: string, facts: Item[]) {
  const { sent } = await observe(userId, [{ content: said }]);
  await script(userId, consolidation({ updated_scaffold: {}, updated_working_memory: said, facts_to_embed: facts }));
  const result = await deliver(sent);
  expect(result.retryMessages).toEqual([]);
}

const facts = async (key: string, history = false) =>
  (await getJson<{ facts: Fact[] }>(key, `/v1/memory/facts?limit=200${history ? "&include_superseded=true" : ""}`)).facts;
const live = async (key: string) => (await facts(key)).map((f) => f.text).sort();

describe("supersession by the consolidation model's key", { timeout: 60_000 }, () => {
  it("never replaces the user's city with someone else's, nor with a fact that has no key", async () => {
    const u = await createUser();
    await consolidate(u.id, "I live in Berlin", [{ text: "User lives in Berlin", key: "user.home_city" }]);
    await consolidate(u.id, "My sister Clara lives in Manchester", [{ text: "User's sister Clara lives in Manchester", key: "sister.home_city" }]);
    await consolidate(u.id, "Clara says Manchester is rainy", [{ text: "User's sister Clara finds Manchester rainy" }]);
    expect(await live(u.key)).toEqual(["User lives in Berlin", "User's sister Clara finds Manchester rainy", "User's sister Clara lives in Manchester"]);
    expect((await facts(u.key, true)).every((f) => f.superseded_by === null)).toBe(true);
    // The model was shown the related facts' keys, and the user's keys even when search found no fact with them.
    const inputs = (await seen(u.id)).map((r) => parseConsolidationPrompt(typeof r.messages[0]?.content === "string" ? r.messages[0].content : ""));
    expect(inputs[1]?.related_facts).toContainEqual(expect.objectContaining({ text: "User lives in Berlin", key: "user.home_city" }));
    expect(inputs[2]?.related_facts.map((f) => f.text)).not.toContain("User lives in Berlin");
    expect(inputs[2]?.known_keys.sort()).toEqual(["sister.home_city", "user.home_city"]);
  });

  it("replaces the user's city by the key, and any fact by the ids the model names, with history kept", async () => {
    const u = await createUser();
    await consolidate(u.id, "I live in Berlin", [{ text: "User lives in Berlin", key: "user.home_city" }, { text: "User's favourite band is Muse" }]);
    const before = await facts(u.key);
    const berlin = before.find((f) => f.text === "User lives in Berlin");
    const muse = before.find((f) => f.text === "User's favourite band is Muse");
    await consolidate(u.id, "We moved to Lisbon, and these days it's Wet Leg on repeat", [
      { text: "User moved to Lisbon", key: "user.home_city" },
      { text: "User's favourite band is Wet Leg", supersedes: [muse?.id ?? ""] },
    ]);
    expect(await live(u.key)).toEqual(["User moved to Lisbon", "User's favourite band is Wet Leg"]);
    const lisbon = (await facts(u.key)).find((f) => f.text === "User moved to Lisbon");
    const old = await getJson<{ fact: Fact; replaced_by: Fact | null }>(u.key, `/v1/memory/facts/${berlin?.id}`);
    expect(old.fact.superseded_by).toBe(lisbon?.id);
    expect(old.replaced_by?.text).toBe("User moved to Lisbon");
    const current = await getJson<{ replaced: Fact[] }>(u.key, `/v1/memory/facts/${lisbon?.id}`);
    expect(current.replaced.map((f) => f.text)).toEqual(["User lives in Berlin"]);
  });

  it("drops a key the model wrote with nothing visible or too long, and keeps the fact (no failed batch)", async () => {
    const u = await createUser();
    await consolidate(u.id, "I live in Berlin and I like jazz", [
      { text: "User lives in Berlin", key: " User.Home_City\u200b " },
      { text: "User likes jazz", key: "\u200b" },
      { text: "User likes techno", key: "k".repeat(150) },
    ]);
    const stored = await facts(u.key);
    expect(stored.map((f) => [f.text, f.key]).sort()).toEqual([
      ["User likes jazz", null],
      ["User likes techno", null],
      ["User lives in Berlin", "user.home_city"],
    ]);
  });

  it("works the same in French: the key decides, not the words", async () => {
    const u = await createUser();
    await consolidate(u.id, "J'habite à Lyon", [{ text: "L'utilisateur habite à Lyon", key: "user.home_city" }]);
    await consolidate(u.id, "Ma sœur habite à Nantes", [{ text: "La sœur de l'utilisateur habite à Nantes", key: "sœur.home_city" }]);
    await consolidate(u.id, "On a déménagé à Marseille", [{ text: "L'utilisateur a déménagé à Marseille", key: "user.home_city" }]);
    expect(await live(u.key)).toEqual(["L'utilisateur a déménagé à Marseille", "La sœur de l'utilisateur habite à Nantes"]);
    const lyon = (await facts(u.key, true)).find((f) => f.text === "L'utilisateur habite à Lyon");
    expect(lyon?.superseded_by).toBe((await facts(u.key)).find((f) => f.text.includes("Marseille"))?.id);
  });

  it("keeps every user fact of twelve pairs a careful model keys apart", async () => {
    const u = await createUser();
    const pairs: [Item, Item][] = [
      [
        { text: "User works at Acme", key: "user.employer" },
        { text: "User's partner Sam works at Globex", key: "partner.employer" },
      ],
      [
        { text: "User lives in Berlin", key: "user.home_city" },
        { text: "User's sister Clara lives in Manchester", key: "sister.home_city" },
      ],
      [{ text: "User drinks a flat white every morning" }, { text: "User also drinks green tea in the afternoon" }],
      [
        { text: "User trains at Ironworks gym", key: "user.gym" },
        { text: "User's son Leo trains at FlexHouse", key: "son.gym" },
      ],
      [
        { text: "User works as a nurse at St Mary's", key: "user.occupation" },
        { text: "User has a weekend job at a bakery", key: "user.weekend_job" },
      ],
      [{ text: "User lives in a flat in Kreuzberg" }, { text: "User spent a week in Rome visiting friends" }],
      [
        { text: "User's phone is a Pixel 8", key: "user.phone" },
        { text: "User's mother has an iPhone 12", key: "mother.phone" },
      ],
      [
        { text: "User is vegetarian", key: "user.diet" },
        { text: "User's partner Sam eats keto", key: "partner.diet" },
      ],
      [
        { text: "User drives a Volvo V60", key: "user.car" },
        { text: "User's dad drives a Fiat Panda", key: "dad.car" },
      ],
      [{ text: "User plays the guitar" }, { text: "User started learning the piano" }],
      [
        { text: "User supports Arsenal", key: "user.football_team" },
        { text: "User's brother supports Spurs", key: "brother.football_team" },
      ],
      [
        { text: "User's partner is Sam", key: "user.partner" },
        { text: "User's best friend is Jo", key: "user.best_friend" },
      ],
    ];
    await consolidate(
      u.id,
      "About me",
      pairs.map(([mine]) => mine),
    );
    await consolidate(
      u.id,
      "About them, and more about me",
      pairs.map(([, other]) => other),
    );
    const all = await facts(u.key, true);
    expect(all).toHaveLength(24);
    expect(all.filter((f) => f.superseded_by !== null)).toEqual([]);
    for (const [mine] of pairs) expect(all.find((f) => f.text === mine.text)?.key ?? undefined).toBe(mine.key);
  });
});

/** Two friends over three sessions, as a transcript import writes them: one fact a line, dated, with its speaker. */
const CONVERSATION: [date: string, line: string][] = [
  ["2025-03-02", "Nadia: Hey Tomas! How was the move?"],
  ["2025-03-02", "Tomas: Exhausting. I moved to Leipzig last week, boxes everywhere."],
  ["2025-03-02", "Nadia: I live in Hamburg, so we're not that far apart now."],
  ["2025-03-02", "Tomas: True! I work at a small print shop here, started Monday."],
  ["2025-03-02", "Nadia: That must have been tough, leaving your old job."],
  ["2025-03-02", "Tomas: It was. My sister lives in Dresden, so I see her more now."],
  ["2025-03-02", "Nadia: My sister lives in Bremen, she visits every month."],
  ["2025-03-02", "Tomas: I'm a vegetarian these days, by the way."],
  ["2025-03-02", "Nadia: Me too, for about two years now."],
  ["2025-03-02", "Tomas: I drink black coffee, three cups before noon."],
  ["2025-03-02", "Nadia: I switched to green tea, my sleep is much better."],
  ["2025-03-02", "Tomas: I train at a climbing gym near the station."],
  ["2025-03-02", "Nadia: I joined a running club in Altona."],
  ["2025-04-15", "Tomas: Guess what, I got a new phone, a Pixel 8."],
  ["2025-04-15", "Nadia: Nice! I still have my old iPhone 12."],
  ["2025-04-15", "Tomas: My partner works at the university library."],
  ["2025-04-15", "Nadia: My partner works at a bakery, early shifts."],
  ["2025-04-15", "Tomas: That must be hard on both of you."],
  ["2025-04-15", "Nadia: It is, but the bread is worth it."],
  ["2025-04-15", "Tomas: I drive an old Golf now, it barely starts."],
  ["2025-04-15", "Nadia: I sold my car and bought a cargo bike."],
  ["2025-04-15", "Tomas: I'm thinking about switching to an e-bike too."],
  ["2025-04-15", "Nadia: Do it. I commute by bike every day."],
  ["2025-04-15", "Tomas: I take the tram to work."],
  ["2025-04-15", "Nadia: My favourite colour is green, did I ever tell you?"],
  ["2025-04-15", "Tomas: Mine is orange. My favourite colour is orange."],
  ["2025-04-15", "Nadia: Of course it is."],
  ["2025-06-20", "Tomas: I moved again, I live in Berlin now."],
  ["2025-06-20", "Nadia: Already? That must have been tough for you."],
  ["2025-06-20", "Tomas: It was, but I work at a design studio in Mitte now."],
  ["2025-06-20", "Nadia: I started a new job at the harbour office."],
  ["2025-06-20", "Tomas: Congratulations on the new job!"],
  ["2025-06-20", "Nadia: Thanks! I'm on the logistics team."],
  ["2025-06-20", "Tomas: My sister moved to Prague in May."],
  ["2025-06-20", "Nadia: My sister lives in Lisbon now, she loves it."],
  ["2025-06-20", "Tomas: I'm vegan now, fully."],
  ["2025-06-20", "Nadia: I eat fish again, so pescatarian I guess."],
  ["2025-06-20", "Tomas: I train at the bouldering hall in Wedding now."],
  ["2025-06-20", "Nadia: I'm still at the running club."],
  ["2025-06-20", "Tomas: Let's meet in Berlin in August."],
];

describe("a verbatim import", { timeout: 60_000 }, () => {
  it("of a two-speaker conversation over three sessions replaces nothing", async () => {
    const u = await createUser();
    const out = await importFacts(
      u.key,
      CONVERSATION.map(([date, line]) => ({ text: line, metadata: { date, session_id: `s-${date}`, speaker: line.split(":")[0] } })),
    );
    expect(out.facts).toHaveLength(CONVERSATION.length);
    expect(out.superseded).toEqual([]);
    expect(out.facts.filter((f) => f.superseded_by !== null)).toEqual([]);
    const stored = await facts(u.key, true);
    expect(stored).toHaveLength(CONVERSATION.length);
    expect(stored.filter((f) => f.superseded_by !== null || f.key !== null)).toEqual([]);
  });
});
