// The dense fact corpus both memory retrieval benchmarks seed (bench/memory-perf.test.ts inside workerd,
// bench/scenarios/memory-retrieval.mjs over HTTP): a deliberately repetitive vocabulary, so every query term
// matches thousands of a user's facts. Plain JavaScript so the Node scenario can import it too.

const SUBJECTS = ["The team", "User", "User's manager", "The client", "User's sister", "The bakery", "The platform", "The project", "User's dog", "The school"];
const VERBS = ["prefers", "uses", "meets", "ships", "reviews", "plans", "buys", "visits", "tracks", "writes"];
const OBJECTS = [
  "postgres backups",
  "weekly reports",
  "green tea",
  "the Lisbon office",
  "kubernetes upgrades",
  "sourdough bread",
  "budget reviews",
  "marathon training",
  "Jira tickets",
  "design docs",
  "customer calls",
  "release notes",
  "cat vaccines",
  "train tickets",
  "python scripts",
];
const WHEN = [
  "on Mondays",
  "every morning",
  "in March",
  "after lunch",
  "before releases",
  "at weekends",
  "twice a month",
  "in the evening",
  "each quarter",
  "on Fridays",
];

export const DENSE_QUERIES = [
  "when does the team review postgres backups?",
  "green tea",
  "what does my manager plan for the Lisbon office",
  "kubernetes upgrades before releases",
  "who buys sourdough bread at weekends",
  "marathon training every morning",
  "Jira tickets on Fridays",
  "release notes",
  "where are the design docs",
  "cat vaccines in March",
];

/** A deterministic generator in [0, 1). */
export function rng(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

export const pick = (r, xs) => xs[Math.floor(r() * xs.length)];

/** The i-th fact of a user's dense corpus, drawn from `r`. */
export function denseFact(r, i) {
  return `${pick(r, SUBJECTS)} ${pick(r, VERBS)} ${pick(r, OBJECTS)} ${pick(r, WHEN)} (item ${i}, ref ${Math.floor(r() * 1e6).toString(36)})`;
}
