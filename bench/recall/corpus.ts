/**
 * A deterministic long-conversation corpus for the recall evaluation: several users, 24 dated sessions each
 * (~15 turns a session, user and assistant), chit-chat around facts that are stated once, facts that change
 * over time, facts that need two turns, dated events, and questions about things never said.
 * Written before any tuning of retrieval; the questions are fixed by the seed and are not to be edited to move a
 * figure. Evidence is always the user's own turn (the assistant's echo of it does not count).
 */

import { ORIGINAL, type Phrasebook } from "./phrases";

export type Turn = { id: string; session: number; date: string; role: "user" | "assistant"; text: string };
/** `history`: asks what a changing fact was before its current value (evidence: the statement just before it). */
export type QuestionType = "single-hop" | "multi-hop" | "temporal" | "knowledge-update" | "history" | "abstention";
export type Question = {
  user: number;
  type: QuestionType;
  q: string;
  /** Turn ids that answer it (all of them are needed for multi-hop). Empty for abstention. */
  evidence: string[];
  /** Knowledge update: earlier statements of the same attribute, now stale. */
  stale?: string[];
};
export type UserCorpus = { name: string; turns: Turn[] };
export type Corpus = { users: UserCorpus[]; questions: Question[] };

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
function shuffle<T>(r: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
/** Picks `n` distinct values. */
const some = <T>(r: Rng, xs: readonly T[], n: number): T[] => shuffle(r, xs).slice(0, n);

const USER_NAMES = ["Maya", "Jonas", "Priya", "Tomas", "Aiko", "Dele"];
const PEOPLE = [
  "Clara",
  "Tomasz",
  "Ines",
  "Rafael",
  "Hannah",
  "Kofi",
  "Lucia",
  "Mateo",
  "Greta",
  "Yusuf",
  "Nora",
  "Felix",
  "Amara",
  "Sven",
  "Leila",
  "Bruno",
  "Ingrid",
  "Marco",
];
const CITIES = [
  "Lisbon",
  "Rotterdam",
  "Valencia",
  "Leipzig",
  "Porto",
  "Ghent",
  "Bologna",
  "Tallinn",
  "Gdansk",
  "Lyon",
  "Bergen",
  "Seville",
  "Graz",
  "Cork",
  "Brno",
];
const TRIPS = [
  "Iceland",
  "the Amalfi coast",
  "Kyoto",
  "the Scottish Highlands",
  "Marrakech",
  "Crete",
  "the Dolomites",
  "Lapland",
  "Sardinia",
  "Vancouver Island",
];
const EMPLOYERS = [
  "Northwind Logistics",
  "Brightleaf Health",
  "Quarry Labs",
  "Halcyon Bank",
  "Meridian Games",
  "Tidewater Energy",
  "Copperfield Studio",
  "Juniper Analytics",
];
const ROLES = ["data analyst", "product designer", "backend engineer", "project manager", "UX researcher", "accountant", "marketing lead", "QA engineer"];
const GYMS = ["Ironworks", "Peak Fitness", "the Boulder Barn", "Urban Strength", "FlexHouse", "the municipal pool"];
const PHONES = ["Pixel 6", "iPhone 12", "Galaxy S21", "Fairphone 4", "iPhone 15", "Pixel 8"];
const DRINKS: (readonly [string, string])[] = [
  ["black coffee", "three cups before noon"],
  ["green tea", "a whole pot in the morning"],
  ["oat flat whites", "one from the cafe downstairs"],
  ["matcha", "whisked properly, no shortcuts"],
  ["yerba mate", "in a proper gourd"],
];
const CARS = ["Skoda Octavia", "Toyota Yaris", "Volvo V60", "Mazda 3", "Renault Zoe", "Honda Jazz"];
const BOOKS = ["The Remains of the Day", "Piranesi", "Station Eleven", "A Gentleman in Moscow", "The Overstory", "Klara and the Sun"];
const INSTRUMENTS = ["cello", "saxophone", "piano", "ukulele", "drums", "violin"];
const TEAMS = ["Celtic", "Feyenoord", "Atalanta", "Sporting", "Union Berlin", "Athletic Bilbao"];
const ALLERGENS = ["cashews", "shellfish", "kiwi", "sesame", "celery", "mustard"];
const MEDS = ["sumatriptan", "propranolol", "topiramate", "rizatriptan"];
const RESTAURANTS = ["Hana Ramen", "Tonkotsu Corner", "Menya Sora", "Kaze Noodle Bar"];
const VILLAGES = ["Porthleven", "Zennor", "Staithes", "Aldeburgh", "Cromarty", "Tobermory"];
const LANGUAGES = ["Portuguese", "Japanese", "Dutch", "Korean", "Italian", "Turkish"];
const PLANTS = ["lemon tree", "fig tree", "rosemary bush", "olive sapling", "chilli plant"];
const FEARS = ["deep water", "heights", "moths", "crowded lifts", "thunderstorms"];
const PODCASTS = ["Slow Burn", "Hardcore History", "Darknet Diaries", "The Rest Is History", "Radiolab"];
const JOBS2 = ["crane operator", "paramedic", "pastry chef", "air traffic controller", "marine biologist"];
const DOGS = ["Biscuit", "Pepper", "Miso", "Juniper", "Waffles", "Tofu"];
const CHEWED = ["running shoes", "TV remote", "passport cover", "reading glasses", "headphone cable"];
const HOBBIES = ["bouldering", "sea kayaking", "pottery", "salsa dancing", "trail running"];
const RACES = ["half marathon", "10k charity run", "sprint triathlon", "open water swim"];

/** Chit-chat with no fact in it: the bulk of a real conversation. */
const USER_FILLER = [
  "Ugh, the weather today is so grey, I barely wanted to get out of bed.",
  "Can you give me a quick recipe for something with chickpeas? I'm out of ideas.",
  "Work was long today, back to back meetings and nothing actually got decided.",
  "I watched two episodes of that detective show last night, the twist was silly.",
  "Any tips for falling asleep faster? I keep scrolling on my phone until 1am.",
  "I'm thinking about repainting the living room, maybe a warm off-white.",
  "What's a good stretch for a stiff lower back after sitting all day?",
  "The neighbours had a party until 3, I'm running on four hours of sleep.",
  "Remind me what the difference between baking soda and baking powder is?",
  "I tried a new sourdough recipe and it came out flat as a pancake.",
  "Honestly I just need a quiet weekend with a book and some soup.",
  "Do you think it's worth getting a standing desk or is that a fad?",
  "My laptop fan sounds like a jet engine, should I be worried?",
  "I spent the whole afternoon sorting out old photos, weirdly satisfying.",
  "What's an easy way to keep basil alive indoors?",
  "Traffic was a nightmare this morning, took me an hour to get in.",
  "Can you help me write a polite email declining a meeting invite?",
  "I keep forgetting to drink water during the day, any tricks?",
  "The supermarket was out of eggs again, what is going on lately.",
  "Let's plan a cheap dinner menu for the week, nothing too fancy.",
  "I finally cleaned out the fridge, found things I don't want to talk about.",
  "Is it normal to feel tired even after eight hours of sleep?",
  "I started a jigsaw puzzle, a thousand pieces, what was I thinking.",
  "What's a good board game for four people that isn't Monopoly?",
  "My downstairs neighbour's cat keeps sitting on my doorstep, it's adorable.",
  "How long should I boil an egg for a runny yolk?",
  "Rainy Sunday, I'm just going to make pancakes and do nothing.",
  "Can you explain compound interest like I'm five?",
  "I want to be better about budgeting this month, where do I start?",
  "The train was cancelled again, I ended up working from a cafe.",
  "I'm debating whether to get bangs. Talk me out of it.",
  "Give me a fun fact to share at lunch tomorrow.",
  "I need a birthday card message for a colleague I barely know.",
  "What should I pack for a weekend away if the forecast is mixed?",
  "My houseplants look sad, maybe I'm overwatering them.",
  "Is there a trick to folding fitted sheets or is it impossible?",
  "I had the best croissant this morning from the bakery by the station.",
  "Could you summarise the main points of stoicism in a few lines?",
  "I'm so behind on emails, like two hundred unread.",
  "What's a quick ten minute workout I can do at home?",
];
const ASSISTANT_FILLER = [
  "That sounds like a lot. Want me to break it down into smaller steps?",
  "Happy to help! Here are a few ideas you could try this week.",
  "Totally understandable. A bit of rest usually goes a long way.",
  "Good question. The short version: it depends, but here's a rule of thumb.",
  "Here's a simple option that takes about twenty minutes.",
  "I hear you. Would it help to make a short list of what matters most?",
  "Sure, here's a draft you can adapt to your tone.",
  "That's a fun one! Let me know how it turns out.",
  "A few things usually help: routine, light in the morning, and less screen time at night.",
  "Sounds like a nice plan. Anything I can help you prepare?",
  "Oh no, that's frustrating. Hopefully tomorrow is smoother.",
  "Nice! Small wins like that really add up.",
];
const GREETINGS = ["Hey, how's it going?", "Morning! Quick question for you.", "Hi again.", "Evening, I'm back.", "Hello hello.", "Hey, got a minute?"];
const GREETING_REPLIES = ["Hi! Good to see you. What's on your mind?", "Hey! Always. What's up?", "Welcome back! How can I help today?"];
const ACKS = ["That's great news!", "Oh wow, tell me more.", "Nice, thanks for sharing that.", "Good to know!", "Ha, I love that.", "That's a big deal!"];

/** The talk around the facts a phrasebook may replace (the blind corpus brings its own). */
export type Chat = {
  userFiller: readonly string[];
  assistantFiller: readonly string[];
  greetings: readonly string[];
  greetingReplies: readonly string[];
  acks: readonly string[];
  raceReply: string;
  promoReply: string;
};
const DEFAULT_CHAT: Chat = {
  userFiller: USER_FILLER,
  assistantFiller: ASSISTANT_FILLER,
  greetings: GREETINGS,
  greetingReplies: GREETING_REPLIES,
  acks: ACKS,
  raceReply: "Amazing, congratulations!",
  promoReply: "Well deserved!",
};

type Planned = { session: number; user: string; reply?: string; key?: string };

/** The entity lists a phrasebook may replace (the fresh and blind corpora share none of them with any other). */
export type Pools = {
  people: readonly string[];
  cities: readonly string[];
  trips: readonly string[];
  employers: readonly string[];
  roles: readonly string[];
  gyms: readonly string[];
  phones: readonly string[];
  drinks: readonly (readonly [string, string])[];
  cars: readonly string[];
  books: readonly string[];
  instruments: readonly string[];
  teams: readonly string[];
  allergens: readonly string[];
  meds: readonly string[];
  restaurants: readonly string[];
  villages: readonly string[];
  languages: readonly string[];
  plants: readonly string[];
  fears: readonly string[];
  podcasts: readonly string[];
  jobs2: readonly string[];
  dogs: readonly string[];
  chewed: readonly string[];
  hobbies: readonly string[];
  races: readonly string[];
  /** Dates said as words, for the mother's birthday. */
  birthdays: readonly string[];
};
const DEFAULT_POOLS: Pools = {
  people: PEOPLE,
  cities: CITIES,
  trips: TRIPS,
  employers: EMPLOYERS,
  roles: ROLES,
  gyms: GYMS,
  phones: PHONES,
  drinks: DRINKS,
  cars: CARS,
  books: BOOKS,
  instruments: INSTRUMENTS,
  teams: TEAMS,
  allergens: ALLERGENS,
  meds: MEDS,
  restaurants: RESTAURANTS,
  villages: VILLAGES,
  languages: LANGUAGES,
  plants: PLANTS,
  fears: FEARS,
  podcasts: PODCASTS,
  jobs2: JOBS2,
  dogs: DOGS,
  chewed: CHEWED,
  hobbies: HOBBIES,
  races: RACES,
  birthdays: ["3rd of May", "14th of August", "22nd of October", "9th of February"],
};

/** Builds one user's conversations and questions. */
function buildUser(P: Phrasebook, r: Rng, index: number, name: string, start: Date, sessions: number): { corpus: UserCorpus; questions: Question[] } {
  const E: Pools = { ...DEFAULT_POOLS, ...P.pools };
  const C: Chat = { ...DEFAULT_CHAT, ...P.chat };
  const plan: Planned[] = [];
  const questions: Question[] = [];
  const keyed = new Map<string, string>(); // fact key -> turn id, filled while laying turns out
  const pending: { type: QuestionType; q: string; keys: string[]; stale?: string[] }[] = [];
  const dates: string[] = [];
  let t = start.getTime();
  for (let s = 0; s < sessions; s++) {
    t += (12 + Math.floor(r() * 14)) * 86_400_000; // 12-25 days apart: ~15 months in all
    dates.push(new Date(t).toISOString().slice(0, 10));
  }
  const at = (session: number, user: string, key?: string, reply?: string) => plan.push({ session, user, key, reply });
  const people = shuffle(r, E.people);
  const person = () => people.pop() ?? "Sam";

  // Knowledge updates: an attribute stated 2-3 times across the months; the latest is current.
  const cities = some(r, E.cities, 3);
  const friendCity = shuffle(r, E.cities).find((c) => !cities.includes(c)) ?? "Oslo";
  const [s1, s2, s3] = [0, 6 + Math.floor(r() * 5), 15 + Math.floor(r() * 6)];
  at(s1, P.cityStay(cities[0] ?? ""), "city0", P.cityStayReply(cities[0] ?? ""));
  at(s2, P.cityMoving(cities[1] ?? ""), "city1", P.cityMovingReply(cities[1] ?? ""));
  at(s3, P.citySettled(cities[2] ?? ""), "city2", P.citySettledReply(cities[2] ?? ""));
  at(Math.floor(r() * sessions), P.friendCity(person(), friendCity));
  pending.push({ type: "knowledge-update", q: pick(r, P.cityQ), keys: ["city2"], stale: ["city0", "city1"] });

  const [emp0 = "", emp1 = ""] = some(r, E.employers, 2);
  const role = pick(r, E.roles);
  const j1 = 3 + Math.floor(r() * 8);
  at(0 + Math.floor(r() * 2), P.job0(role, emp0), "job0");
  at(j1, P.job1(role, emp1), "job1", P.job1Reply(emp1));
  pending.push({ type: "knowledge-update", q: pick(r, P.jobQ), keys: ["job1"], stale: ["job0"] });

  const [ex, partner] = [person(), person()];
  const b1 = 4 + Math.floor(r() * 6);
  const b2 = b1 + 2 + Math.floor(r() * 4);
  const b3 = b2 + 3 + Math.floor(r() * 4);
  at(b1 - 3, P.rel0(ex), "rel0");
  at(b1, P.rel1(ex), "rel1", P.rel1Reply);
  at(Math.min(b3, sessions - 1), P.rel2(partner), "rel2", P.rel2Reply(partner));
  pending.push({ type: "knowledge-update", q: pick(r, P.relQ), keys: ["rel2"], stale: ["rel0", "rel1"] });

  const [d0, d1] = some(r, E.drinks, 2);
  const dr = 8 + Math.floor(r() * 8);
  at(1 + Math.floor(r() * 3), P.drink0(d0?.[0] ?? "", d0?.[1] ?? ""), "drink0");
  at(dr, P.drink1(d1?.[0] ?? "", d1?.[1] ?? ""), "drink1");
  pending.push({ type: "knowledge-update", q: pick(r, P.drinkQ), keys: ["drink1"], stale: ["drink0"] });

  const [g0 = "", g1 = ""] = some(r, E.gyms, 2);
  const gy = 5 + Math.floor(r() * 12);
  at(Math.floor(r() * 4), P.gym0(g0), "gym0");
  at(gy, P.gym1(g1), "gym1");
  pending.push({ type: "knowledge-update", q: pick(r, P.gymQ), keys: ["gym1"], stale: ["gym0"] });

  const [p0 = "", p1 = ""] = some(r, E.phones, 2);
  const ph = 6 + Math.floor(r() * 14);
  at(Math.floor(r() * 5), P.phone0(p0), "phone0");
  at(ph, P.phone1(p1), "phone1", P.phone1Reply(p1));
  pending.push({ type: "knowledge-update", q: pick(r, P.phoneQ), keys: ["phone1"], stale: ["phone0"] });

  // More kinds of changing fact, for phrasebooks that bring them (the original and held-out ones do not, so
  // their corpora are unchanged): each value stated in turn, sessions apart; the last is current.
  for (const u of P.updates ?? []) {
    const values = some(r, u.values, u.states.length);
    let s = Math.floor(r() * 4);
    u.states.forEach((state, i) => {
      if (i > 0) s = Math.min(sessions - (u.states.length - i), s + 3 + Math.floor(r() * 6));
      at(s, state(values[i] ?? ""), `${u.key}${i}`, u.replies?.[i]?.(values[i] ?? ""));
    });
    const last = u.states.length - 1;
    const stale = Array.from({ length: last }, (_, i) => `${u.key}${i}`);
    pending.push({ type: "knowledge-update", q: pick(r, u.currentQ), keys: [`${u.key}${last}`], stale });
    if (u.historyQ?.length) pending.push({ type: "history", q: pick(r, u.historyQ), keys: [`${u.key}${last - 1}`] });
  }

  // Single-hop facts: stated once, asked in other words.
  const sister = person();
  const singles: [string, string, string][] = [
    [P.sister(sister), "sister", pick(r, P.sisterQ)],
    [P.allergy(pick(r, E.allergens)), "allergy", pick(r, P.allergyQ)],
    [P.car(pick(r, E.cars)), "car", pick(r, P.carQ)],
    [P.book(pick(r, E.books)), "book", pick(r, P.bookQ)],
    [P.instrument(pick(r, E.instruments)), "instrument", pick(r, P.instrumentQ)],
    [P.mom(pick(r, E.birthdays)), "mom", pick(r, P.momQ)],
    [P.team(pick(r, E.teams)), "team", pick(r, P.teamQ)],
    [P.desk(person()), "desk", pick(r, P.deskQ)],
    [P.meds(pick(r, E.meds)), "meds", pick(r, P.medsQ)],
    [P.ramen(pick(r, E.restaurants)), "ramen", pick(r, P.ramenQ)],
    [P.village(pick(r, E.villages)), "village", pick(r, P.villageQ)],
    [P.language(pick(r, E.languages)), "language", pick(r, P.languageQ)],
    [P.plant(pick(r, E.plants)), "plant", pick(r, P.plantQ)],
    [P.fear(pick(r, E.fears)), "fear", pick(r, P.fearQ)],
    [P.podcast(pick(r, E.podcasts)), "podcast", pick(r, P.podcastQ)],
  ];
  for (const [text, key, q] of some(r, singles, 12)) {
    at(Math.floor(r() * sessions), text, key, pick(r, C.acks));
    pending.push({ type: "single-hop", q, keys: [key] });
  }

  // Multi-hop: two turns, sessions apart, each useless alone.
  const fiance = person();
  const m1 = Math.floor(r() * 10);
  at(m1, P.engaged(fiance), "engaged", P.engagedReply);
  at(m1 + 3 + Math.floor(r() * 8), P.fianceJob(fiance, pick(r, E.jobs2)), "fiancejob");
  pending.push({ type: "multi-hop", q: P.fianceQ, keys: ["engaged", "fiancejob"] });

  const friend = person();
  const friendTo = shuffle(r, E.cities).find((c) => !cities.includes(c) && c !== friendCity) ?? "Riga";
  const m2 = Math.floor(r() * 12);
  at(m2, P.bff(friend, friendTo), "bff");
  at(m2 + 2 + Math.floor(r() * 8), P.bffVisit(friend), "bffvisit");
  pending.push({ type: "multi-hop", q: P.bffQ, keys: ["bff", "bffvisit"] });

  const dog = pick(r, E.dogs);
  const m3 = Math.floor(r() * 10);
  at(m3, P.dog(dog), "dog", P.dogReply(dog));
  at(m3 + 2 + Math.floor(r() * 10), P.chewed(dog, pick(r, E.chewed)), "chewed");
  pending.push({ type: "multi-hop", q: P.dogQ, keys: ["dog", "chewed"] });

  const manager = person();
  const hobby = pick(r, E.hobbies);
  const m4 = Math.floor(r() * 12);
  at(m4, P.manager(manager), "manager");
  at(m4 + 1 + Math.floor(r() * 9), P.teamHobby(manager, hobby), "teamhobby");
  pending.push({ type: "multi-hop", q: P.managerQ, keys: ["manager", "teamhobby"] });

  // Temporal: dated events; questions name the time or ask for it.
  const trips = some(r, E.trips, 3);
  const tripSessions = some(
    r,
    Array.from({ length: sessions }, (_, i) => i),
    3,
  ).sort((a, b) => a - b);
  trips.forEach((trip, i) => {
    const s = tripSessions[i] ?? 0;
    at(s, P.trip(trip), `trip${i}`, P.tripReply);
  });
  const month = (s: number) => new Date(`${dates[s]}T00:00:00Z`).toLocaleString("en-GB", { month: "long", year: "numeric", timeZone: "UTC" });
  const tripAsk = Math.floor(r() * 3);
  pending.push({ type: "temporal", q: P.tripQ(month(tripSessions[tripAsk] ?? 0)), keys: [`trip${tripAsk}`] });
  const race = pick(r, E.races);
  const rs = Math.floor(r() * sessions);
  at(rs, P.race(race), "race", C.raceReply);
  pending.push({ type: "temporal", q: P.raceQ(race), keys: ["race"] });
  const ps = Math.floor(r() * sessions);
  at(ps, P.promo, "promo", C.promoReply);
  pending.push({ type: "temporal", q: P.promoQ, keys: ["promo"] });
  const first = dates[0] ?? "";
  const year = first.slice(0, 4);
  const inYear = plan.filter((p) => p.key?.startsWith("trip") && dates[p.session]?.startsWith(year)).map((p) => p.key ?? "");
  if (inYear.length) pending.push({ type: "temporal", q: P.tripsInYearQ(year), keys: inYear });
  const lastSession = sessions - 1;
  at(lastSession, P.latestPlan, "latestplan");
  pending.push({ type: "temporal", q: P.latestPlanQ, keys: ["latestplan"] });

  // Abstention: plausible questions about things this user never mentioned.
  for (const q of some(r, P.abstention, 5)) pending.push({ type: "abstention", q, keys: [] });

  // Lay the sessions out: greeting, filler pairs with the planned statements placed at random among them.
  const turns: Turn[] = [];
  for (let s = 0; s < sessions; s++) {
    const date = dates[s] ?? "";
    const mine = plan.filter((p) => p.session === s);
    const slots: (Planned | null)[] = [...mine, ...Array.from({ length: Math.max(4, 7 - mine.length) }, () => null)];
    let n = 0;
    const push = (role: Turn["role"], text: string) => turns.push({ id: `u${index}s${s}t${n++}`, session: s, date, role, text });
    push("user", pick(r, C.greetings));
    push("assistant", pick(r, C.greetingReplies));
    for (const slot of shuffle(r, slots)) {
      const text = slot ? slot.user : pick(r, C.userFiller);
      push("user", text);
      const id = turns.at(-1)?.id ?? "";
      if (slot?.key) keyed.set(slot.key, id);
      push("assistant", slot ? (slot.reply ?? pick(r, C.acks)) : pick(r, C.assistantFiller));
    }
  }
  for (const p of pending) {
    const evidence = p.keys.map((k) => keyed.get(k)).filter((x): x is string => !!x);
    if (evidence.length !== p.keys.length) continue; // a planned statement fell past the last session
    const stale = p.stale?.map((k) => keyed.get(k)).filter((x): x is string => !!x);
    questions.push({ user: index, type: p.type, q: p.q, evidence, ...(stale ? { stale } : {}) });
  }
  return { corpus: { name, turns }, questions };
}

/** The corpus the eval was first written with; `HELD_OUT` phrasing with another seed is the check that nothing was fitted to it. */
export const ORIGINAL_SEED = 20240601;
export const HELD_OUT_SEED = 77031;
/** The third corpus (`FRESH` phrasing): written before the ranking work that followed the held-out figure. */
export const FRESH_SEED = 5150917;
/** The fourth corpus (`BLIND` phrasing, phrases-blind.ts): written without reading the ranking code, the blind check. */
export const BLIND_SEED = 8264013;

export function generateCorpus(seed = ORIGINAL_SEED, users = 6, sessions = 24, P: Phrasebook = ORIGINAL): Corpus {
  const r = mulberry32(seed);
  const out: Corpus = { users: [], questions: [] };
  for (let u = 0; u < users; u++) {
    const start = new Date(Date.UTC(2024, Math.floor(r() * 3), 1 + Math.floor(r() * 20)));
    const names = P.userNames ?? USER_NAMES;
    const { corpus, questions } = buildUser(P, r, u, names[u % names.length] ?? "User", start, sessions);
    out.users.push(corpus);
    out.questions.push(...questions);
  }
  return out;
}
