/**
 * The offline embedder: the default for `wrangler dev` and the tests, never production. It stands in for a
 * sentence model with feature hashing, and is the one place where embedding knows a language: the English
 * concept list below is a heuristic of the stand-in (CONTRIBUTING.md: rules that depend on a language live only
 * in the offline model); the production embedders (embed-workers-ai.ts) learn nothing from word lists and work in
 * every language.
 */
import { approxTokens, fnv1a } from "../lib/text";
import { type Embedder, normalize, type SparseVector } from "./embed";
import { contentTerms } from "./offline-terms";

/**
 * A few broad concept groups, so that "where does she live" meets "moved to Lisbon". Not a thesaurus:
 * paraphrase in general is out of reach of a hashing embedder, and the labelled evaluation says so.
 */
const CONCEPTS: Record<string, string> = {
  residence: "live lives living home house apartment flat reside city town moved move address based neighbourhood neighborhood",
  work: "work works job employer employed company career role occupation office profession colleague boss team hired",
  diet: "eat eats food diet vegetarian vegan meal meals cook cooking allergic allergy dish lunch dinner breakfast",
  pet: "pet pets dog dogs cat cats puppy kitten",
  family: "wife husband partner son daughter kid kids child children family spouse mother father sister brother parents",
  code: "code coding programming language typescript javascript python rust golang framework library repo repository",
  schedule: "meeting meetings schedule calendar deadline appointment standup weekly daily morning evening",
  travel: "travel trip flight flights vacation holiday visit visiting hotel airport",
  contact: "email emails message messages slack call phone reply contact",
  preference: "prefer prefers preference like likes love loves favorite favourite enjoy enjoys hate hates dislike",
  health: "health doctor medication medicine allergy allergic sick injury",
  money: "budget price cost pay salary money invoice expense",
  tools: "jira github linear notion confluence trello asana",
};

const conceptOf = new Map<string, string>();
for (const [concept, list] of Object.entries(CONCEPTS)) {
  for (const word of list.split(" ")) for (const term of contentTerms(word)) conceptOf.set(term, concept);
}

export const LOCAL_DIMENSIONS = 1 << 18;

/** Feature hashing of stemmed words (1.0), word bigrams (0.5) and concept tags (0.6) into 2^18 dimensions. */
export function hashEmbed(text: string, dimensions = LOCAL_DIMENSIONS): SparseVector {
  const terms = contentTerms(text);
  const acc = new Map<number, number>();
  const add = (feature: string, weight: number) => {
    const dim = fnv1a(feature) % dimensions;
    acc.set(dim, (acc.get(dim) ?? 0) + weight);
  };
  terms.forEach((term, i) => {
    add(`w:${term}`, 1);
    const next = terms[i + 1];
    if (next) add(`b:${term} ${next}`, 0.5);
    const concept = conceptOf.get(term);
    if (concept) add(`c:${concept}`, 0.6);
  });
  return normalize(acc);
}

export const localEmbedder: Embedder = {
  model: "engram-local-hash-v1",
  dimensions: LOCAL_DIMENSIONS,
  minScore: 0.12,
  // Measured on LoCoMo's development conversations (docs/memory.md, "What each part earns"): its stems, word pairs
  // and concepts are a second view of the words that finds what BM25 ranks low; 3 was best of 0.25 to 6.
  fusionWeight: 3,
  embed: async (texts) => ({ vectors: texts.map((t) => hashEmbed(t)), tokens: texts.reduce((n, t) => n + approxTokens(t), 0) }),
};
