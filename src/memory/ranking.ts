/**
 * Ranking of fact search, pure: no reads, no clock. `planSearch` reads the query (terms, expansion, time
 * cues, the attribute it asks about); `rankCandidates` orders the candidate lists the reads found.
 * Fusion is by score, not by rank: BM25 scaled by the best BM25 of the query, plus the cosine times the
 * embedder's weight (a weak local embedder moves close calls, it cannot bury a strong lexical match; a
 * vector list under the embedder's noise floor is dropped). Confidence and reinforcement reorder near-ties
 * only. Time: a query that names a period prefers facts from it, one that asks about the present prefers
 * the latest statements, one about the past prefers what was replaced.
 */
import type { JsonObject } from "../db/schema";
import type { Embedder } from "./embed";
import { expandTerms, relatedStems } from "./expand";
import { supersedeOpen } from "./open-supersede";
import type { Candidate, Candidates, Scored, SearchHit, SearchInput, SearchMode } from "./search-types";
import { CHANGE_EXTRA, CHANGE_MARK } from "./slot-cues";
import { askedSlot } from "./slot-questions";
import { isStopword, normalizeText, stem, words } from "./text";
import { cueWords, type TimeCues, timeCues } from "./when";

const HALF_LIFE_DAYS = 90;
/** Under this match the best hit is reported as weak (chosen on the recall evaluation's abstention questions). */
export const WEAK_MATCH = 0.45;

/** Content words of a query, as typed (FTS5's porter tokenizer stems them). */
export function queryTerms(text: string): string[] {
  return [...new Set(words(text).filter((w) => !isStopword(w) && (w.length > 1 || /\d/.test(w))))].slice(0, 32);
}

/** Particles that make a phrasal verb ("wake up", "give up", "sign off", "move out"): the stop list drops them. */
const PARTICLE = /^(?:up|off|out|over|away|back|down)$/;
/** "up the hill", "over my head": a preposition before a noun phrase, not a particle. */
const DETERMINER = /^(?:the|a|an|my|your|our|his|her|their|its|this|that|these|those|some|any|each|every)$/;

/**
 * The particles of the query's phrasal verbs: a particle right after a content word and before the end or a
 * function word ("What time do I wake up on weekdays?" -> "up"; not "up the hill"). The particle carries the verb's
 * meaning ("wake up" and "get up" share only it), so it is searched for like a content word.
 */
export function phrasalParticles(text: string): string[] {
  const ws = words(text);
  const ends = (next: string | undefined) => next === undefined || (isStopword(next) && !DETERMINER.test(next));
  return [...new Set(ws.filter((w, i) => PARTICLE.test(w) && i > 0 && !isStopword(ws[i - 1] ?? "the") && ends(ws[i + 1])))];
}

/** What a search reads and ranks by, from its input alone. */
export type SearchPlan = {
  /** The input, with `history` on when the query asks about the past. */
  input: SearchInput;
  mode: SearchMode;
  now: number;
  cues: TimeCues;
  /** The user's attribute the question asks about (see slots.ts), if any. */
  slot: string | null;
  /** The slot read instead when no fact has `slot` (see `askedSlot`), and the stems of the words that named it. */
  slotFallback: string | null;
  fallbackStems: Set<string>;
  /** Stems of the words that named that attribute ("smartphone", "work out"): its statements contain their answer. */
  slotStems: Set<string>;
  /** Stems of the period the query names ("february 2024"): a fact from that period answers them. */
  periodStems: Set<string>;
  terms: string[];
  /** Near-synonyms and irregular forms of the terms. */
  extra: string[];
  /** Every word of the query, function words too (the filler list's terms). */
  everyWord: string[];
  /** One term per stem: the words whose rarity weighs the match signal. */
  stems: Map<string, string>;
};

export function planSearch(request: SearchInput, now: number): SearchPlan {
  const mode = request.mode ?? "hybrid";
  const cues = timeCues(request.query, now);
  // "Where did I live before?": what was replaced is what the question is about.
  const input = cues.past ? { ...request, history: true } : request;
  const asked = mode === "vector" ? null : askedSlot(input.query);
  // "These days", "right now", "at the moment": the time logic answers them; they are not words a fact should
  // contain, so they are searched for only when the question has no other word ("right now" would find "Right,
  // I'm here", "these days" every line about a day).
  const timeOnly = new Set(cueWords(input.query, cues).map(stem));
  // Asked about the present, the state a phrasal verb names is what changes ("what time do I wake up now?"); in other
  // questions the particle would match every line with "up" for a question about growing up or a set-up.
  const allTerms = [...queryTerms(input.query), ...(cues.current ? phrasalParticles(input.query) : [])];
  const content = allTerms.filter((t) => !timeOnly.has(stem(t)));
  const terms = content.length ? content : allTerms;
  const stems = new Map<string, string>();
  for (const t of terms) if (!stems.has(stem(t)) && !timeOnly.has(stem(t))) stems.set(stem(t), t);
  const stemsOf = (ws: readonly string[]) => new Set(ws.filter((w) => !isStopword(w)).map(stem));
  return {
    input,
    mode,
    now,
    cues,
    slot: asked?.slot ?? null,
    slotFallback: asked?.fallback?.slot ?? null,
    fallbackStems: stemsOf(asked?.fallback?.words ?? []),
    slotStems: stemsOf(asked?.words ?? []),
    periodStems: stemsOf(words(cues.range?.phrase ?? "")),
    terms,
    extra: expandTerms(terms),
    everyWord: [...new Set(words(input.query))].slice(0, 32),
    stems,
  };
}

/** Too few matches for k: the query's function words too, as BM25 over every word would, at a low weight. */
export function needsFiller(plan: SearchPlan, text: readonly Scored[], expanded: readonly Scored[]): boolean {
  const found = new Set([...text, ...expanded].map((c) => c.id));
  return plan.mode !== "vector" && found.size < plan.input.k && plan.everyWord.length > plan.terms.length;
}

/**
 * Rarity of each query word in this user's own facts, as an inverse-frequency weight for the match
 * signal: `1 / ln(e + df)`.
 */
export function termWeights(plan: SearchPlan, docFrequency: ReadonlyMap<string, number>): Map<string, number> {
  return new Map([...plan.stems.keys()].map((s) => [s, 1 / Math.log(Math.E + (docFrequency.get(s) ?? 0))]));
}

/**
 * Share of the query's rarity-weighted words present in the text; a word absent but for a related word (a
 * near-synonym or irregular form from the expansion lists) counts half. `answered`: words the fact answers
 * without containing them (the attribute a slot statement is about, the period its event time falls in).
 */
export function matchOf(
  weights: ReadonlyMap<string, number>,
  text: string,
  related: ReadonlyMap<string, readonly string[]> = new Map(),
  answered: ReadonlySet<string> = new Set(),
): number {
  let total = 0;
  for (const w of weights.values()) total += w;
  if (!total) return 0;
  const present = new Set([...words(text).map(stem), ...answered]);
  let got = 0;
  for (const [term, w] of weights) {
    if (present.has(term)) got += w;
    else if (related.get(term)?.some((x) => present.has(x))) got += w / 2;
  }
  return got / total;
}

/** Confidence, reinforcement and decay: a multiplier around 1. */
export function quality(c: Pick<Candidate, "confidence" | "recall_count" | "last_recalled_at" | "created_at">, now: number): number {
  const touched = Math.max(c.created_at, c.last_recalled_at ?? 0);
  const ageDays = Math.max(0, now - touched) / 86_400_000;
  const freshness = 0.6 + 0.4 * 2 ** (-ageDays / HALF_LIFE_DAYS);
  return (0.6 + 0.4 * c.confidence) * (1 + 0.15 * Math.log1p(c.recall_count)) * freshness;
}

/** Quality may reorder near-ties only: +-5% at most, so a fact restated often never outranks a better match. */
const tieBreak = (q: number) => 1 + 0.05 * Math.max(-1, Math.min(1, (q - 0.9) / 0.3));

const EXPANDED_WEIGHT = 0.5;
const FILLER_WEIGHT = 0.15;
const PERIOD_BOOST = 1.6;
const OUT_OF_PERIOD = 0.6;
const RECENCY_BOOST = 1.0;
const SLOT_WEIGHT = 1.0;
/** The attribute's current statement over a line that merely shares a word with the question. */
const ANSWER_BONUS = 0.5;
const CHANGE_BOOST = 1.5;
/**
 * A statement that announces a change or a state that holds now: the slot cues' change marks ("switched",
 * "instead", "no longer", "these days", "... now", "my old X") and the ways a new state starts or an old one
 * ends ("started", "sold", "lost interest in", "finished with", "since the move").
 */
const isChange = (text: string) => {
  const lower = text.toLowerCase().replace(/\u2019/g, "'");
  return CHANGE_MARK.test(lower) || CHANGE_EXTRA.test(lower);
};

/**
 * Among candidates that contain the same words of the question (at least two of them, so the same subject),
 * the one said last: asked about the present, it is the current statement of that subject.
 */
function latestOfSubject(plan: SearchPlan, candidates: readonly Candidate[], eventOf: (c: Candidate) => number): Set<string> {
  const groups = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const present = new Set(words(c.text).map(stem));
    const key = [...plan.stems.keys()].filter((s) => present.has(s)).join(" ");
    if (!key) continue;
    const group = groups.get(key);
    if (group) group.push(c);
    else groups.set(key, [c]);
  }
  const out = new Set<string>();
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const last = group.reduce((a, b) => (eventOf(b) > eventOf(a) ? b : a));
    out.add(last.id);
  }
  return out;
}

/** A question word this common in the user's facts ("going", "work") says little about which fact is asked for. */
const COMMON_IN_FACTS = 30;

/** The stems that say what the question asks about: its words that are not common in the user's facts, and their near-synonyms. */
function askedStems(plan: SearchPlan, docFrequency: ReadonlyMap<string, number>): Set<string> {
  const own = [...plan.stems.keys()].filter((s) => (docFrequency.get(s) ?? 0) <= COMMON_IN_FACTS);
  return new Set([...own, ...plan.extra.map(stem)]);
}

export type Ranked = {
  /** The chosen candidates, best first (or in the requested time order), at most k. */
  chosen: { c: Candidate; score: number }[];
  results: SearchHit[];
  weak: boolean;
};

export function rankCandidates(plan: SearchPlan, found: Candidates, embedder: Pick<Embedder, "minScore" | "fusionWeight">): Ranked {
  const { input, mode, now, cues, terms } = plan;
  const { text, expanded, slotted } = found;
  const filler = needsFiller(plan, text, expanded) ? found.filler : [];
  const weights = termWeights(plan, found.docFrequency);

  const vectorWeight = mode === "vector" ? 1 : (embedder.fusionWeight ?? 0.5);
  const fused = new Map<string, { c: Candidate; relevance: number }>();
  const addList = (list: Scored[], weight: number) => {
    const best = Math.max(0, ...list.map((c) => c.lexical));
    for (const c of list) {
      const entry = fused.get(c.id) ?? { c, relevance: 0 };
      entry.relevance += best > 0 ? (weight * c.lexical) / best : 0;
      fused.set(c.id, entry);
    }
  };
  addList(text, 1);
  addList(expanded, EXPANDED_WEIGHT);
  addList(filler, FILLER_WEIGHT);
  // The attribute's current statement (or, asked about the past, the ones it replaced) counts as a full match.
  const answers = new Set<string>();
  for (const c of slotted) {
    const entry = fused.get(c.id) ?? { c, relevance: 0 };
    const answer = (c.superseded_by === null) === !cues.past;
    if (answer) answers.add(c.id);
    entry.relevance += answer ? SLOT_WEIGHT : SLOT_WEIGHT / 4;
    fused.set(c.id, entry);
  }
  const eventOf = (c: Candidate) => c.event_at ?? c.created_at;
  // The slot's answer is the attribute's current statement as far as the slot cues saw. A later statement that
  // shares the question's words and announces a change ("these days I have...", "switched to") may be a newer
  // statement of the same attribute the cues missed: then the answer keeps no privilege over it.
  const lexical = [...text, ...expanded].filter((c) => !answers.has(c.id) && isChange(c.text));
  const latestChange = Math.max(Number.NEGATIVE_INFINITY, ...lexical.map(eventOf));
  const privileged = (c: Candidate) => !cues.past && answers.has(c.id) && eventOf(c) >= latestChange;
  for (const c of slotted) {
    const entry = fused.get(c.id);
    if (entry && privileged(c)) entry.relevance += ANSWER_BONUS;
  }
  for (const c of found.vector) {
    const entry = fused.get(c.id) ?? { c, relevance: 0 };
    // Only the similarity above the embedder's noise floor is evidence; in vector-only mode the raw cosine ranks.
    entry.relevance += mode === "vector" ? c.cosine : vectorWeight * Math.max(0, (c.cosine - embedder.minScore) / (1 - embedder.minScore));
    fused.set(c.id, entry);
  }

  const times = [...fused.values()].map(({ c }) => eventOf(c));
  const latest = cues.current
    ? latestOfSubject(
        plan,
        [...fused.values()].map(({ c }) => c),
        eventOf,
      )
    : new Set<string>();
  const [oldest, newest] = [Math.min(...times), Math.max(...times)];
  const period = input.after === undefined && input.before === undefined ? cues.range : null;
  const ranked = [...fused.values()]
    .map(({ c, relevance }) => {
      let score = relevance * tieBreak(quality(c, now));
      const at = eventOf(c);
      if (period) score *= at >= period.from && at < period.to ? PERIOD_BOOST : OUT_OF_PERIOD;
      // A privileged answer is current by supersession, however long ago it was said.
      // ...and so is the latest of the candidates that match the same words of the question (the same subject).
      if (cues.current && newest > oldest) score *= 1 + RECENCY_BOOST * (privileged(c) || latest.has(c.id) ? 1 : (at - oldest) / (newest - oldest));
      // A statement that announces a change ("switched to", "instead", "no longer") is the newer state of its topic.
      if (cues.current && isChange(c.text)) score *= CHANGE_BOOST;
      // History ranks under what is current; asked about the past, the other way round.
      if ((c.superseded_by !== null) !== cues.past) score *= 0.5;
      return { c, score };
    })
    .sort((a, b) => b.score - a.score || eventOf(b.c) - eventOf(a.c));
  const evidenced = new Set([...text, ...expanded, ...slotted, ...found.vector].map((c) => c.id));
  // Asked about the present, and no slot knows the attribute: the latest linked statement that announces a change
  // replaces the earlier ones it is linked to (open-supersede.ts).
  const ordered =
    cues.current && !cues.past && answers.size === 0
      ? supersedeOpen(ranked, { questionStems: askedStems(plan, found.docFrequency), eventOf, evidence: (c) => evidenced.has(c.id) })
      : ranked;

  const seen = new Set<string>();
  const chosen: { c: Candidate; score: number }[] = [];
  for (const entry of ordered) {
    const key = normalizeText(entry.c.text).toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    chosen.push(entry);
    if (chosen.length >= input.k) break;
  }
  if (input.order === "newest") chosen.sort((a, b) => eventOf(b.c) - eventOf(a.c));
  if (input.order === "oldest") chosen.sort((a, b) => eventOf(a.c) - eventOf(b.c));
  const related = new Map(terms.map((t) => [stem(t), relatedStems(t)]));
  const inPeriod = (c: Candidate) => cues.range !== null && eventOf(c) >= cues.range.from && eventOf(c) < cues.range.to;
  // The fallback's statements answer the words that named the fallback's attribute, not the thing asked.
  const slotStems = slotted.some((c) => c.slot !== plan.slot) ? plan.fallbackStems : plan.slotStems;
  const answered = (c: Candidate) => new Set([...(answers.has(c.id) ? slotStems : []), ...(inPeriod(c) ? plan.periodStems : [])]);
  const results: SearchHit[] = chosen.map(({ c, score }) => ({
    id: c.id,
    text: c.text,
    score: Math.round(score * 1e4) / 1e4,
    match: Math.round(matchOf(weights, c.text, related, answered(c)) * 1e4) / 1e4,
    eventAt: eventOf(c),
    supersededBy: c.superseded_by,
    metadata: JSON.parse(c.metadata) as JsonObject,
    confidence: c.confidence,
  }));
  const best = Math.max(0, ...results.map((r) => r.match));
  return { chosen, results, weak: best < WEAK_MATCH };
}
