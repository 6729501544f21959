/**
 * Ranking of fact search, pure: no reads, no clock. `planSearch` reads the query (its words, the period it
 * names); `rankCandidates` fuses the full-text and vector lists the reads found and applies time.
 *
 * Nothing here knows a language: words are Unicode letter and digit runs, how much a word says is measured on
 * the user's own facts (a word in a large share of them is dropped from the full-text query, as a stop list
 * would, in any language), and time comes from the facts' event times and a date parser. Every factor was kept
 * because an ablation on real conversations showed it helps (docs/memory.md, "What each part earns").
 */

import { stemmer } from "stemmer";
import type { JsonObject } from "../db/schema";
import { normalizeText } from "../lib/text";
import type { Embedder } from "./embed";
import type { Candidate, Candidates, SearchHit, SearchInput, SearchMode } from "./search-types";
import { words } from "./text";
import { type TimeCues, timeCues } from "./when";

/** Under this match the best hit is reported as weak: likely nothing relevant is stored. */
export const WEAK_MATCH = 0.3;
/** At most this many of the query's words are searched (FTS5's cost grows with each OR arm). */
const MAX_TERMS = 32;

/**
 * The measured choices (docs/memory.md). An evaluation may pass others to `searchFacts` to ablate one; the
 * product always runs with these.
 */
export type Tuning = {
  /**
   * "user": BM25 recomputed over the candidates with the user's own statistics (facts, document frequencies);
   * "fts5": FTS5's bm25(), whose collection is every user's facts.
   */
  lexical: "user" | "fts5";
  /** "sum": full-text BM25 scaled by the query's best plus the vector similarity times its weight; "rrf": reciprocal rank fusion. */
  fusion: "sum" | "rrf";
  /** The vector list's weight in the fusion; undefined: the embedder's own (`Embedder.fusionWeight`). */
  vectorWeight?: number;
  rrfK: number;
  /** Full-text rows FTS5 ranks before scoping; more with a time filter or history, which drop many. */
  depth: number;
  /** A query word in more than this share of the user's facts is not searched (unless no other word is in them). */
  commonShare: number;
  /** ... and at least this many facts: a small memory has no common words to speak of. */
  commonFloor: number;
  /** Score factors for facts inside and outside the period the question names. */
  periodIn: number;
  periodOut: number;
  /**
   * A turn of a conversation gains this share of the better of its two neighbours' relevance (the turns just
   * before and after it in its session, when they are candidates too): "What did you paint?" makes sense of the
   * answer "A lake at sunrise".
   */
  neighbourShare: number;
  /**
   * Pseudo-relevance feedback among the candidates: each gains this share of its overlap with the words of the
   * best three (weighted by how few candidates contain them). 0: off.
   */
  feedback: number;
  /** Asked about the present: the newest candidate's score grows by this share, the oldest's by none. */
  latest: number;
  /** Leave the words of the question's time expression out of the full-text query. */
  stripTimePhrase: boolean;
  /** BM25's term-frequency saturation. */
  k1: number;
  /**
   * BM25's length normalisation: 0 ignores a fact's length, 1 divides by it fully. A long conversational turn says
   * more things, not the same thing at length, so it should lose little for its length (0.75, the textbook value
   * tuned on news articles, buried long turns under short ones sharing a commoner word).
   */
  b: number;
};

export const TUNING: Tuning = {
  lexical: "user",
  fusion: "sum",
  rrfK: 60,
  depth: 400,
  commonShare: 0.05,
  commonFloor: 20,
  periodIn: 1.6,
  periodOut: 0.6,
  neighbourShare: 0.5,
  feedback: 0.5,
  latest: 0.3,
  stripTimePhrase: true,
  k1: 1.2,
  b: 0.2,
};

/** What the index puts in front of every word (src/db/fts-tag.ts): any 8 digits stem alike. */
const TAG = "10000000";

/**
 * A word as the full-text index stores it: lower case, without diacritics, and Porter's stem of the word with the
 * owner's tag in front, as FTS5's porter tokenizer stems it (the tag changes the stem of some words: "ines" stays
 * "ine", and "is" becomes "i"). The `stemmer` package and FTS5 agree on 5,393 of the 5,394 distinct words of the
 * LoCoMo conversations written this way, so BM25 computed here counts the words the index matched.
 */
export const indexForm = (word: string): string => {
  let form = FORMS.get(word);
  if (form === undefined) {
    form = stemmer(TAG + word.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase()).slice(TAG.length);
    // A search stems every word of up to 200 candidates; an isolate keeps the forms it has seen (bounded).
    if (FORMS.size >= MAX_FORMS) FORMS.clear();
    FORMS.set(word, form);
  }
  return form;
};
const FORMS = new Map<string, string>();
const MAX_FORMS = 50_000;

/** The words of each candidate as the index stores them, once per search (BM25 and feedback both read them). */
const formsOf = new WeakMap<Candidate, string[]>();
const candidateForms = (c: Candidate): string[] => {
  let forms = formsOf.get(c);
  if (!forms) {
    forms = words(c.text).map(indexForm);
    formsOf.set(c, forms);
  }
  return forms;
};

/** The query's searchable words, in order, once each: letters and digits of any script. */
export function queryTerms(text: string): string[] {
  return [...new Set(words(text))].slice(0, MAX_TERMS);
}

/** What a search reads and ranks by, from its input alone. */
export type SearchPlan = {
  input: SearchInput;
  mode: SearchMode;
  now: number;
  cues: TimeCues;
  /** The words searched in full text (the time expression's left out when others remain). */
  terms: string[];
  /** One term per stem: the words whose rarity weighs the match signal. */
  stems: Map<string, string>;
  tuning: Tuning;
};

export function planSearch(input: SearchInput, now: number, tuning: Tuning = TUNING): SearchPlan {
  const cues = timeCues(input.query, now);
  const all = queryTerms(input.query);
  const timeWords = new Set(tuning.stripTimePhrase && cues.range ? words(cues.range.phrase) : []);
  const content = all.filter((t) => !timeWords.has(t));
  const terms = content.length ? content : all;
  const stems = new Map<string, string>();
  for (const t of terms) if (!stems.has(indexForm(t))) stems.set(indexForm(t), t);
  return { input, mode: input.mode ?? "hybrid", now, cues, terms, stems, tuning };
}

/**
 * Rarity of each query word in this user's own facts, as an inverse-frequency weight for the match signal:
 * `1 / ln(e + df)`. A word most facts contain ("the", "le", "und") weighs little, in any language.
 */
export function termWeights(plan: SearchPlan, docFrequency: ReadonlyMap<string, number>): Map<string, number> {
  return new Map([...plan.stems.keys()].map((s) => [s, 1 / Math.log(Math.E + (docFrequency.get(s) ?? 0))]));
}

/** Share of the query's rarity-weighted words present in the text. */
export function matchOf(weights: ReadonlyMap<string, number>, text: string): number {
  let total = 0;
  for (const w of weights.values()) total += w;
  if (!total) return 0;
  const present = new Set(words(text).map(indexForm));
  let got = 0;
  for (const [term, w] of weights) if (present.has(term)) got += w;
  return got / total;
}

export type Ranked = {
  /** The chosen candidates, best first (or in the requested time order), at most k. */
  chosen: { c: Candidate; score: number }[];
  results: SearchHit[];
  weak: boolean;
};

const eventOf = (c: Candidate) => c.event_at ?? c.created_at;
/**
 * Of equal scores the later event first, then the later write (rowid). Without the last key, ties fell to the order
 * the lists were read in, which follows fact ids: the same question over the same facts could answer in another
 * order for another user.
 */
const newerFirst = (a: Candidate, b: Candidate) => eventOf(b) - eventOf(a) || b.rowid - a.rowid;

/** The document frequency over which a word is common for this user (the full-text read applies the same rule in SQL). */
export const commonLimit = (tuning: Tuning, facts: number) => Math.max(tuning.commonFloor, Math.floor(facts * tuning.commonShare));

/**
 * Okapi BM25 of each candidate for the query's words, with the user's own statistics: the number of facts the
 * user has and each word's document frequency among them. FTS5's bm25() counts its rows over every user's facts,
 * which flattens the difference between a rare and a common word more the more users there are. Document length
 * is normalised by the candidates' mean length (the user's own mean is not read).
 */
export function userBm25(plan: SearchPlan, found: Pick<Candidates, "docFrequency" | "facts">, candidates: readonly Candidate[]): Map<string, number> {
  const forms = new Map(candidates.map((c) => [c.id, candidateForms(c)]));
  const lengths = [...forms.values()].map((f) => f.length);
  const avgdl = lengths.reduce((a, b) => a + b, 0) / Math.max(1, lengths.length) || 1;
  // The index's porter and this one can disagree on a word ("Ines"): a word the candidates contain is in at least
  // that many of the user's facts, whatever the index counted.
  const seen = new Map<string, number>();
  for (const f of forms.values()) for (const w of new Set(f)) if (plan.stems.has(w)) seen.set(w, (seen.get(w) ?? 0) + 1);
  const dfOf = (t: string) => Math.max(found.docFrequency.get(t) ?? 0, seen.get(t) ?? 0);
  const common = commonLimit(plan.tuning, found.facts);
  const stems = [...plan.stems.keys()];
  // The words the full-text query searched (`uncommonTerms`): common ones are left out, unless no word is both
  // in the user's facts and uncommon.
  const uncommon = (t: string) => dfOf(t) > 0 && dfOf(t) <= common;
  const searched = stems.some(uncommon) ? stems.filter(uncommon) : stems;
  const idf = new Map(
    searched.map((t) => {
      const df = dfOf(t);
      const n = Math.max(found.facts, df);
      return [t, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
    }),
  );
  const { k1, b } = plan.tuning;
  const out = new Map<string, number>();
  for (const [id, f] of forms) {
    const tf = new Map<string, number>();
    for (const w of f) if (idf.has(w)) tf.set(w, (tf.get(w) ?? 0) + 1);
    let score = 0;
    for (const [w, n] of tf) score += ((idf.get(w) ?? 0) * n * (k1 + 1)) / (n + k1 * (1 - b + (b * f.length) / avgdl));
    out.set(id, score);
  }
  return out;
}

/** Each list's evidence for each candidate, fused into one relevance. */
function fuse(plan: SearchPlan, found: Candidates, embedder: Pick<Embedder, "minScore" | "fusionWeight">): Map<string, { c: Candidate; relevance: number }> {
  const { mode, tuning } = plan;
  const fused = new Map<string, { c: Candidate; relevance: number }>();
  const add = (c: Candidate, value: number) => {
    const entry = fused.get(c.id) ?? { c, relevance: 0 };
    entry.relevance += value;
    fused.set(c.id, entry);
  };
  const vectorWeight = mode === "vector" ? 1 : (tuning.vectorWeight ?? embedder.fusionWeight ?? 0.5);
  const bm25 = tuning.lexical === "user" ? userBm25(plan, found, found.text) : null;
  const text = found.text
    .map((c) => ({ c, lexical: bm25 ? (bm25.get(c.id) ?? 0) : c.lexical }))
    .filter((x) => x.lexical > 0)
    .sort((a, b) => b.lexical - a.lexical);
  if (tuning.fusion === "rrf") {
    text.forEach(({ c }, i) => add(c, 1 / (tuning.rrfK + i + 1)));
    found.vector.forEach((c, i) => add(c, vectorWeight / (tuning.rrfK + i + 1)));
    return fused;
  }
  const best = Math.max(0, ...text.map((x) => x.lexical));
  for (const { c, lexical } of text) add(c, best > 0 ? lexical / best : 0);
  for (const c of found.vector) {
    // Only the similarity above the embedder's noise floor is evidence; in vector-only mode the raw cosine ranks.
    add(c, mode === "vector" ? c.cosine : vectorWeight * Math.max(0, (c.cosine - embedder.minScore) / (1 - embedder.minScore)));
  }
  return fused;
}

/** Where a candidate sits in its conversation: its session and its row (turns of a session are imported in order). */
function place(c: Candidate): string | null {
  const session = (JSON.parse(c.metadata) as { session_id?: unknown }).session_id;
  return typeof session === "string" ? session : null;
}

/** Each turn gains a share of its better neighbour's relevance (see `Tuning.neighbourShare`). */
function withNeighbours(fused: Map<string, { c: Candidate; relevance: number }>, share: number) {
  if (!share) return fused;
  const at = new Map<string, number>();
  for (const { c, relevance } of fused.values()) {
    const session = place(c);
    if (session !== null) at.set(`${session}\u0000${c.rowid}`, relevance);
  }
  const out = new Map<string, { c: Candidate; relevance: number }>();
  for (const [id, { c, relevance }] of fused) {
    const session = place(c);
    const near = session === null ? 0 : Math.max(at.get(`${session}\u0000${c.rowid - 1}`) ?? 0, at.get(`${session}\u0000${c.rowid + 1}`) ?? 0);
    out.set(id, { c, relevance: relevance + share * near });
  }
  return out;
}

/**
 * Relevance feedback without a second read: the words of the three best candidates, each weighted by how rare it is
 * among all candidates, and every candidate's overlap with them (scaled by the best overlap) added at `share`.
 */
function withFeedback(fused: Map<string, { c: Candidate; relevance: number }>, share: number) {
  if (!share || fused.size < 4) return fused;
  const entries = [...fused.values()];
  const forms = new Map(entries.map(({ c }) => [c.id, new Set(candidateForms(c))]));
  const df = new Map<string, number>();
  for (const f of forms.values()) for (const w of f) df.set(w, (df.get(w) ?? 0) + 1);
  const top = [...entries].sort((a, b) => b.relevance - a.relevance || newerFirst(a.c, b.c)).slice(0, 3);
  const weight = new Map<string, number>();
  for (const { c } of top) for (const w of forms.get(c.id) ?? []) weight.set(w, (weight.get(w) ?? 0) + Math.log(entries.length / (df.get(w) ?? 1)));
  const overlap = new Map(entries.map(({ c }) => [c.id, [...(forms.get(c.id) ?? [])].reduce((n, w) => n + (weight.get(w) ?? 0), 0)]));
  const best = Math.max(0, ...overlap.values());
  const scale = Math.max(0, ...entries.map((e) => e.relevance));
  if (!best) return fused;
  return new Map(entries.map(({ c, relevance }) => [c.id, { c, relevance: relevance + (share * scale * (overlap.get(c.id) ?? 0)) / best }]));
}

export function rankCandidates(plan: SearchPlan, found: Candidates, embedder: Pick<Embedder, "minScore" | "fusionWeight">): Ranked {
  const { input, cues, tuning } = plan;
  const fused = withFeedback(withNeighbours(fuse(plan, found, embedder), tuning.neighbourShare), tuning.feedback);
  const times = [...fused.values()].map(({ c }) => eventOf(c));
  const [oldest, newest] = [Math.min(...times), Math.max(...times)];
  const period = input.after === undefined && input.before === undefined ? cues.range : null;
  const preferLatest = (input.preferLatest ?? cues.current) && newest > oldest;
  const ranked = [...fused.values()]
    .map(({ c, relevance }) => {
      let score = relevance;
      const at = eventOf(c);
      // A period is a preference, not a filter (`after`/`before` filter): a fact dated a little off still counts.
      if (period) score *= at >= period.from && at < period.to ? tuning.periodIn : tuning.periodOut;
      // Of near-equal matches the latest is the current state; a small share, so it never buries a better match.
      if (preferLatest) score *= 1 + (tuning.latest * (at - oldest)) / (newest - oldest);
      // History (asked for with `history`) ranks under what is current.
      if (c.superseded_by !== null) score *= 0.5;
      return { c, score };
    })
    .sort((a, b) => b.score - a.score || newerFirst(a.c, b.c));

  const seen = new Set<string>();
  const chosen: { c: Candidate; score: number }[] = [];
  for (const entry of ranked) {
    const key = normalizeText(entry.c.text).toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    chosen.push(entry);
    if (chosen.length >= input.k) break;
  }
  if (input.order === "newest") chosen.sort((a, b) => eventOf(b.c) - eventOf(a.c));
  if (input.order === "oldest") chosen.sort((a, b) => eventOf(a.c) - eventOf(b.c));
  const weights = termWeights(plan, found.docFrequency);
  const results: SearchHit[] = chosen.map(({ c, score }) => ({
    id: c.id,
    text: c.text,
    score: Math.round(score * 1e4) / 1e4,
    match: Math.round(matchOf(weights, c.text) * 1e4) / 1e4,
    eventAt: eventOf(c),
    supersededBy: c.superseded_by,
    metadata: JSON.parse(c.metadata) as JsonObject,
    confidence: c.confidence,
  }));
  const best = Math.max(0, ...results.map((r) => r.match));
  return { chosen, results, weak: best < WEAK_MATCH };
}
