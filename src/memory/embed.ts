/**
 * Embedders: text -> L2-normalised sparse vectors. Production uses Workers AI (dense bge vectors);
 * offline and in tests a deterministic feature-hashing embedder stands in behind the same interface.
 */
import { approxTokens, fnv1a } from "../lib/text";
import { contentTerms } from "./text";

export type SparseVector = { indices: number[]; values: number[] };

export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** Cosine similarity under which a match is noise for this embedder. */
  readonly minScore: number;
  /** How much its cosine counts next to full-text relevance (scaled to 1 for the best match) in hybrid fusion. */
  readonly fusionWeight?: number;
  embed(texts: string[]): Promise<{ vectors: SparseVector[]; tokens: number }>;
}

const tokensOf = (texts: string[]) => texts.reduce((n, t) => n + approxTokens(t), 0);

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

export function normalize(acc: Map<number, number>): SparseVector {
  const entries = [...acc.entries()].filter(([, v]) => v !== 0).sort((a, b) => a[0] - b[0]);
  const norm = Math.sqrt(entries.reduce((n, [, v]) => n + v * v, 0)) || 1;
  return { indices: entries.map(([i]) => i), values: entries.map(([, v]) => v / norm) };
}

export const localEmbedder: Embedder = {
  model: "engram-local-hash-v1",
  dimensions: LOCAL_DIMENSIONS,
  minScore: 0.12,
  // Hashing shares words with BM25 and knows a few concepts: it breaks ties and fills gaps, it does not lead.
  fusionWeight: 0.25,
  embed: async (texts) => ({ vectors: texts.map((t) => hashEmbed(t)), tokens: tokensOf(texts) }),
};

const dense = (values: number[]): SparseVector => normalize(new Map(values.map((v, i) => [i, v])));

/** The one Workers AI call the embedder makes (the `AI` binding has it). */
export interface TextEmbeddings {
  run(model: "@cf/baai/bge-base-en-v1.5", input: { text: string[] }): Promise<unknown>;
}

/** Workers AI text embeddings (bge-base, 768 dimensions, cosine). */
export function workersAiEmbedder(ai: TextEmbeddings, model = "@cf/baai/bge-base-en-v1.5" as const): Embedder {
  return {
    model,
    dimensions: 768,
    minScore: 0.5,
    fusionWeight: 0.8,
    async embed(texts) {
      const vectors: SparseVector[] = [];
      for (let i = 0; i < texts.length; i += 100) {
        const batch = texts.slice(i, i + 100);
        const out = await ai.run(model, { text: batch });
        const data = out && typeof out === "object" && "data" in out && Array.isArray(out.data) ? (out.data as unknown[]) : [];
        if (data.length !== batch.length || !data.every((v): v is number[] => Array.isArray(v))) throw new Error("Workers AI returned no embeddings");
        vectors.push(...data.map(dense));
      }
      return { vectors, tokens: tokensOf(texts) };
    },
  };
}

/** Dot product of two sparse vectors with ascending indices (= cosine for normalised vectors). */
export function dot(a: SparseVector, b: SparseVector): number {
  let i = 0;
  let j = 0;
  let sum = 0;
  while (i < a.indices.length && j < b.indices.length) {
    const ai = a.indices[i] ?? 0;
    const bj = b.indices[j] ?? 0;
    if (ai === bj) sum += (a.values[i++] ?? 0) * (b.values[j++] ?? 0);
    else if (ai < bj) i++;
    else j++;
  }
  return sum;
}

export function toDense(v: SparseVector, dimensions: number): number[] {
  const out = new Array<number>(dimensions).fill(0);
  v.indices.forEach((i, k) => {
    out[i] = v.values[k] ?? 0;
  });
  return out;
}
