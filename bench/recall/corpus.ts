/**
 * A deterministic long-conversation corpus for the recall evaluation: several users, 24 dated sessions each
 * (~15 turns a session, user and assistant), chit-chat around facts that are stated once, facts that change
 * over time, facts that need two turns, dated events, and questions about things never said.
 * Written before any tuning of retrieval; the questions are fixed by the seed and are not to be edited to move a
 * figure. Evidence is always the user's own turn (the assistant's echo of it does not count).
 */

export type Turn = { id: string; session: number; date: string; role: "user" | "assistant"; text: string };
export type QuestionType = "single-hop" | "multi-hop" | "temporal" | "knowledge-update" | "abstention";
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
const DRINKS = [
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

type Planned = { session: number; user: string; reply?: string; key?: string };

/** Builds one user's conversations and questions. */
function buildUser(r: Rng, index: number, name: string, start: Date, sessions: number): { corpus: UserCorpus; questions: Question[] } {
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
  const people = shuffle(r, PEOPLE);
  const person = () => people.pop() ?? "Sam";

  // Knowledge updates: an attribute stated 2-3 times across the months; the latest is current.
  const cities = some(r, CITIES, 3);
  const friendCity = shuffle(r, CITIES).find((c) => !cities.includes(c)) ?? "Oslo";
  const [s1, s2, s3] = [0, 6 + Math.floor(r() * 5), 15 + Math.floor(r() * 6)];
  at(s1, `I've lived in ${cities[0]} for about four years now and I still get lost in the old town.`, "city0", `${cities[0]} has such a lovely old town!`);
  at(s2, `Big news: we're moving to ${cities[1]} next month, the flat is already full of boxes.`, "city1", `Exciting! ${cities[1]} is a great choice.`);
  at(s3, `Finally settled into our new place in ${cities[2]}, the commute is so much shorter.`, "city2", `Welcome to ${cities[2]}! Enjoy the short commute.`);
  at(Math.floor(r() * sessions), `My friend ${person()} lives in ${friendCity} and keeps telling me to visit.`);
  pending.push({
    type: "knowledge-update",
    q: pick(r, ["Which city do I live in now?", "Where am I based these days?", "What town is home for me at the moment?"]),
    keys: ["city2"],
    stale: ["city0", "city1"],
  });

  const [emp0, emp1] = some(r, EMPLOYERS, 2);
  const role = pick(r, ROLES);
  const j1 = 3 + Math.floor(r() * 8);
  at(0 + Math.floor(r() * 2), `I work as a ${role} at ${emp0}, mostly spreadsheets and stakeholder meetings.`, "job0");
  at(j1, `I accepted the offer from ${emp1}! I start there as a senior ${role} in three weeks.`, "job1", `Congratulations on the new role at ${emp1}!`);
  pending.push({
    type: "knowledge-update",
    q: pick(r, ["Which company am I working for at the moment?", "Who is my current employer?", "Where do I work now?"]),
    keys: ["job1"],
    stale: ["job0"],
  });

  const [ex, partner] = [person(), person()];
  const b1 = 4 + Math.floor(r() * 6);
  const b2 = b1 + 2 + Math.floor(r() * 4);
  const b3 = b2 + 3 + Math.floor(r() * 4);
  at(b1 - 3, `I've been seeing someone, ${ex}. It's early days but it feels easy.`, "rel0");
  at(b1, `${ex} and I broke up last week. It was mutual but I'm a bit flat.`, "rel1", "I'm sorry. Be gentle with yourself.");
  at(
    Math.min(b3, sessions - 1),
    `I met ${partner} at a friend's barbecue and we've been dating for a month now.`,
    "rel2",
    `That's lovely, ${partner} sounds fun!`,
  );
  pending.push({
    type: "knowledge-update",
    q: pick(r, ["Who is my partner right now?", "Who am I dating currently?", "Am I seeing anyone at the moment, and who?"]),
    keys: ["rel2"],
    stale: ["rel0", "rel1"],
  });

  const [d0, d1] = some(r, DRINKS, 2);
  const dr = 8 + Math.floor(r() * 8);
  at(1 + Math.floor(r() * 3), `I'm a ${d0?.[0]} person, ${d0?.[1]}, otherwise I can't function.`, "drink0");
  at(dr, `I've switched to ${d1?.[0]} completely, ${d1?.[1]}. My sleep is so much better.`, "drink1");
  pending.push({
    type: "knowledge-update",
    q: pick(r, ["What do I drink in the mornings these days?", "What's my go-to morning drink now?"]),
    keys: ["drink1"],
    stale: ["drink0"],
  });

  const [g0, g1] = some(r, GYMS, 2);
  const gy = 5 + Math.floor(r() * 12);
  at(Math.floor(r() * 4), `I train at ${g0} three times a week, mostly weights.`, "gym0");
  at(gy, `I cancelled my membership and joined ${g1} instead, it's closer and cheaper.`, "gym1");
  pending.push({
    type: "knowledge-update",
    q: pick(r, ["Which gym am I a member of now?", "Where do I work out these days?"]),
    keys: ["gym1"],
    stale: ["gym0"],
  });

  const [p0, p1] = some(r, PHONES, 2);
  const ph = 6 + Math.floor(r() * 14);
  at(Math.floor(r() * 5), `My ${p0} is on its last legs, the battery dies by lunchtime.`, "phone0");
  at(ph, `I upgraded to the ${p1} and the camera is unreal.`, "phone1", `Enjoy the new ${p1}!`);
  pending.push({
    type: "knowledge-update",
    q: pick(r, ["What phone do I have now?", "Which smartphone am I using at the moment?"]),
    keys: ["phone1"],
    stale: ["phone0"],
  });

  // Single-hop facts: stated once, asked in other words.
  const sister = person();
  const singles: [string, string, string][] = [
    [
      `My sister ${sister} is coming over this weekend, we haven't seen each other in months.`,
      "sister",
      pick(r, ["What's my sister called?", "What is the name of my sister?"]),
    ],
    [
      `Turns out I'm allergic to ${pick(r, ALLERGENS)}, the doctor confirmed it after the blood test.`,
      "allergy",
      pick(r, ["What did the blood test show I'm allergic to?", "Which food am I allergic to?"]),
    ],
    [
      `I finally bought a used ${pick(r, CARS)}, dark blue, drives like a dream.`,
      "car",
      pick(r, ["What car did I buy?", "Which car model did I get second hand?"]),
    ],
    [
      `I just finished ${pick(r, BOOKS)} and I can't stop thinking about the ending.`,
      "book",
      pick(r, ["Which book's ending stuck with me?", "What novel did I finish recently?"]),
    ],
    [
      `I signed up for ${pick(r, INSTRUMENTS)} lessons on Thursday evenings.`,
      "instrument",
      pick(r, ["What instrument am I learning?", "Which instrument do I take lessons for?"]),
    ],
    [
      `Mom's birthday is on the ${pick(r, ["3rd of May", "14th of August", "22nd of October", "9th of February"])}, I need to order flowers in time.`,
      "mom",
      pick(r, ["When is my mother's birthday?", "What date is Mom's birthday?"]),
    ],
    [
      `I've supported ${pick(r, TEAMS)} since I was a kid, my dad took me to every home game.`,
      "team",
      pick(r, ["Which football team do I support?", "What club have I supported since childhood?"]),
    ],
    [
      `My new desk neighbour ${person()} brings homemade kimchi every Friday.`,
      "desk",
      pick(r, ["Who sits next to me at work?", "What's the name of my desk neighbour?"]),
    ],
    [
      `The doctor put me on ${pick(r, MEDS)} for my migraines.`,
      "meds",
      pick(r, ["What medication am I on for migraines?", "What do I take for my headaches?"]),
    ],
    [
      `${pick(r, RESTAURANTS)} near the station does the best ramen I've ever had.`,
      "ramen",
      pick(r, ["Where do I get my favourite ramen?", "Which place makes the best ramen in my opinion?"]),
    ],
    [`I grew up in a tiny fishing village called ${pick(r, VILLAGES)}.`, "village", pick(r, ["Where did I grow up?", "What village am I from originally?"])],
    [
      `I've started learning ${pick(r, LANGUAGES)} with an app, twenty minutes a day.`,
      "language",
      pick(r, ["Which language am I studying?", "What language am I learning with an app?"]),
    ],
    [
      `My ${pick(r, PLANTS)} on the balcony somehow survived the winter.`,
      "plant",
      pick(r, ["What plant survived the winter on my balcony?", "Which balcony plant made it through the cold months?"]),
    ],
    [`I'm terrified of ${pick(r, FEARS)}, always have been.`, "fear", pick(r, ["What am I scared of?", "What is my biggest fear?"])],
    [
      `I'm hooked on a podcast called ${pick(r, PODCASTS)} for my commute.`,
      "podcast",
      pick(r, ["What podcast do I listen to on the way to work?", "Which podcast am I hooked on?"]),
    ],
  ];
  for (const [text, key, q] of some(r, singles, 12)) {
    at(Math.floor(r() * sessions), text, key, pick(r, ACKS));
    pending.push({ type: "single-hop", q, keys: [key] });
  }

  // Multi-hop: two turns, sessions apart, each useless alone.
  const fiance = person();
  const m1 = Math.floor(r() * 10);
  at(m1, `My sister got engaged to ${fiance}! We're all thrilled.`, "engaged", "Congratulations to them both!");
  at(m1 + 3 + Math.floor(r() * 8), `${fiance} works as a ${pick(r, JOBS2)}, so the wedding date has to fit his shifts.`, "fiancejob");
  pending.push({ type: "multi-hop", q: "What does my sister's fiancé do for a living?", keys: ["engaged", "fiancejob"] });

  const friend = person();
  const friendTo = shuffle(r, CITIES).find((c) => !cities.includes(c) && c !== friendCity) ?? "Riga";
  const m2 = Math.floor(r() * 12);
  at(m2, `My best friend ${friend} moved to ${friendTo} for a research job.`, "bff");
  at(m2 + 2 + Math.floor(r() * 8), `Booked flights to go see ${friend} next month, can't wait.`, "bffvisit");
  pending.push({ type: "multi-hop", q: "Which city am I flying to when I visit my best friend?", keys: ["bff", "bffvisit"] });

  const dog = pick(r, DOGS);
  const m3 = Math.floor(r() * 10);
  at(m3, `We adopted a rescue puppy and named him ${dog}.`, "dog", `${dog} is a perfect name!`);
  at(m3 + 2 + Math.floor(r() * 10), `${dog} chewed through my ${pick(r, CHEWED)} again, unbelievable.`, "chewed");
  pending.push({ type: "multi-hop", q: "What did my puppy destroy?", keys: ["dog", "chewed"] });

  const manager = person();
  const hobby = pick(r, HOBBIES);
  const m4 = Math.floor(r() * 12);
  at(m4, `My manager at work is ${manager}, very calm, never sends emails after six.`, "manager");
  at(m4 + 1 + Math.floor(r() * 9), `${manager} got the whole team to try ${hobby} on Saturday and I loved it.`, "teamhobby");
  pending.push({ type: "multi-hop", q: "What activity did my boss get the team to try?", keys: ["manager", "teamhobby"] });

  // Temporal: dated events; questions name the time or ask for it.
  const trips = some(r, TRIPS, 3);
  const tripSessions = some(
    r,
    Array.from({ length: sessions }, (_, i) => i),
    3,
  ).sort((a, b) => a - b);
  trips.forEach((trip, i) => {
    const s = tripSessions[i] ?? 0;
    at(s, `Just got back from a week in ${trip}, I'm still sorting through photos.`, `trip${i}`, "Welcome back! How was it?");
  });
  const month = (s: number) => new Date(`${dates[s]}T00:00:00Z`).toLocaleString("en-GB", { month: "long", year: "numeric", timeZone: "UTC" });
  const tripAsk = Math.floor(r() * 3);
  pending.push({ type: "temporal", q: `Where did I go on holiday in ${month(tripSessions[tripAsk] ?? 0)}?`, keys: [`trip${tripAsk}`] });
  const race = pick(r, RACES);
  const rs = Math.floor(r() * sessions);
  at(rs, `I did it, finished my first ${race} this morning! Legs are jelly.`, "race", "Amazing, congratulations!");
  pending.push({ type: "temporal", q: `When did I do my first ${race}?`, keys: ["race"] });
  const ps = Math.floor(r() * sessions);
  at(ps, `Got promoted today! They announced it in the all-hands.`, "promo", "Well deserved!");
  pending.push({ type: "temporal", q: "When was I promoted?", keys: ["promo"] });
  const first = dates[0] ?? "";
  const year = first.slice(0, 4);
  const inYear = plan.filter((p) => p.key?.startsWith("trip") && dates[p.session]?.startsWith(year)).map((p) => p.key ?? "");
  if (inYear.length) pending.push({ type: "temporal", q: `Which trips did I take in ${year}?`, keys: inYear });
  const lastSession = sessions - 1;
  at(lastSession, `Weekend plan: a long hike and then pizza, nothing else.`, "latestplan");
  pending.push({ type: "temporal", q: "What did I say I was doing in the most recent weekend plan I mentioned?", keys: ["latestplan"] });

  // Abstention: plausible questions about things this user never mentioned.
  for (const q of some(
    r,
    [
      "What is my brother's dog called?",
      "Which university did I graduate from?",
      "How much did I pay for my bike?",
      "What's my favourite opera?",
      "When is my dentist appointment?",
      "What is my blood type?",
      "What's the name of my daughter's school?",
      "Which airline do I fly with for work?",
    ],
    5,
  ))
    pending.push({ type: "abstention", q, keys: [] });

  // Lay the sessions out: greeting, filler pairs with the planned statements placed at random among them.
  const turns: Turn[] = [];
  for (let s = 0; s < sessions; s++) {
    const date = dates[s] ?? "";
    const mine = plan.filter((p) => p.session === s);
    const slots: (Planned | null)[] = [...mine, ...Array.from({ length: Math.max(4, 7 - mine.length) }, () => null)];
    let n = 0;
    const push = (role: Turn["role"], text: string) => turns.push({ id: `u${index}s${s}t${n++}`, session: s, date, role, text });
    push("user", pick(r, GREETINGS));
    push("assistant", pick(r, GREETING_REPLIES));
    for (const slot of shuffle(r, slots)) {
      const text = slot ? slot.user : pick(r, USER_FILLER);
      push("user", text);
      const id = turns.at(-1)?.id ?? "";
      if (slot?.key) keyed.set(slot.key, id);
      push("assistant", slot ? (slot.reply ?? pick(r, ACKS)) : pick(r, ASSISTANT_FILLER));
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

export function generateCorpus(seed = 20240601, users = 6, sessions = 24): Corpus {
  const r = mulberry32(seed);
  const out: Corpus = { users: [], questions: [] };
  for (let u = 0; u < users; u++) {
    const start = new Date(Date.UTC(2024, Math.floor(r() * 3), 1 + Math.floor(r() * 20)));
    const { corpus, questions } = buildUser(r, u, USER_NAMES[u % USER_NAMES.length] ?? "User", start, sessions);
    out.users.push(corpus);
    out.questions.push(...questions);
  }
  return out;
}
