/**
 * Query-time supersession for changing facts of kinds no slot knows (slots.ts needs the attribute named in advance:
 * where one lives, works, trains...). Open world: the "slot" is the question itself. Asked about the present,
 * among the user's own statements that the search found for the question, a later statement that announces a
 * change ("switched", "instead", "no longer", "new", "now", "started", "joined") is taken as the newer state of
 * whatever an earlier one said, when the two are linked: both contain the question's words (or their
 * near-synonyms), or they share a distinctive word beyond the question's (pseudo-relevance feedback from the
 * earlier statement). The later statement moves to just above the earlier one; nothing else moves, so questions
 * that are not about a changing fact keep their order (a blanket "latest first" hurt multi-hop recall).
 * Pure: no reads, no clock.
 */
import type { Candidate } from "./search-types";
import { CHANGE_EXTRA, CHANGE_MARK } from "./slot-cues";
import { isStopword, stem, words } from "./text";

/** Generic words of a new state beginning or an old one ending, beside the slot cues' change marks. */
const OPEN_CHANGE =
  /\b(?:new|newly|start|starts|began|begin|begins|joined|joining|accepted|signed|moved|moving|cancell?ed|left|finally|from\s+now\s+on|any\s*more|these\s+days)\b/;

/** Whether a statement announces a change: the newer state of whatever it is about. */
export function announcesChange(text: string): boolean {
  const lower = text.toLowerCase().replace(/\u2019/g, "'");
  return CHANGE_MARK.test(lower) || CHANGE_EXTRA.test(lower) || OPEN_CHANGE.test(lower);
}

/** A statement by the user: not the assistant's turn, not a question. */
function isStatement(c: Candidate): boolean {
  if (c.text.trim().endsWith("?")) return false;
  try {
    const meta = JSON.parse(c.metadata) as { role?: unknown };
    return meta.role !== "assistant";
  } catch {
    return true;
  }
}

export type OpenInput = {
  /** Stems of the question's content words that are not common in the user's facts, and of their near-synonyms. */
  questionStems: ReadonlySet<string>;
  eventOf: (c: Candidate) => number;
  /**
   * Whether the search found the candidate by what it says (a content word of the question or a near-synonym, the
   * attribute asked, or the vector half), not only through the question's function words (the fill list). A fill
   * hit is about anything ("I'm seeing Sam now, three months in" for "Who's my doctor now?"): it anchors nothing,
   * and it replaces a statement only through a name both contain ("my GP is Dr Okafor" -> "I'm under Dr Brennan
   * now") or a distinctive word that is not a count or a unit of time ("three", "weeks").
   */
  evidence?: (c: Candidate) => boolean;
};

/** How far down the ranked list statements are compared (the search's usual k of 25, at most). */
export const OPEN_WINDOW = 25;
/** A shared word links two statements only if at most this many listed statements contain it. */
const MAX_SHARED = 3;
/** Without a question word in common, two statements are linked by at least this many distinctive words. */
const MIN_SHARED = 1;

/** Statements this high in the list are the ones a later change may replace. */
const ANCHORS = 8;

/** Stems are the costly part (Porter, about 1 us a word): each word is stemmed once per isolate, up to a bound. */
const STEMS = new Map<string, string>();
const stemOf = (w: string) => {
  let s = STEMS.get(w);
  if (s === undefined) {
    if (STEMS.size >= 20_000) STEMS.clear();
    STEMS.set(w, (s = stem(w)));
  }
  return s;
};

type Facts = { stems: Set<string>; names: Set<string>; asked: boolean; change: boolean; at: number; found: boolean };

/** Stems of counts and units of time: shared by statements about anything. */
const GENERIC =
  /^(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelv|twenti|thirti|forti|fifti|hundr|thousand|first|second|third|last|next|few|sever|half|coupl|dozen|minut|hour|dai|week|weekend|month|year|morn|afternoon|even|night|todai|tonight|tomorrow|yesterdai|time|ago)$/;

/** Days and months are capitalised without naming what a statement is about. */
const CALENDAR = /^(?:mon|tues|wednes|thurs|fri|satur|sun)days?$|^(?:january|february|march|april|may|june|july|august|september|october|november|december)$/;

/**
 * The capitalised words of a statement that are not the first word of a sentence ("Ghent", "Dr", "Okafor"), lower
 * case: names of places, people, firms and titles. "I" and the calendar are left out.
 */
export function namesIn(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?<![.!?:]\s*|^\s*)(?<![\p{L}\p{N}'\u2019])\p{Lu}[\p{L}\p{N}]*/gu)) {
    const w = m[0].toLowerCase();
    if (w !== "i" && !CALENDAR.test(w)) out.add(w);
  }
  return out;
}

/**
 * Reorders `ranked` (best first). Each of the top statements about what the question asks that a later, linked
 * statement announcing a change replaces gets that statement just above it: the most strongly linked one (most
 * distinctive words shared, then both about what the question asks, then the better ranked). The moved statement
 * is then checked the same way, so a chain of changes ends with its latest link first. Nothing else moves.
 * A moved statement takes at least the score of the one it replaces, so a client that sorts the results by score
 * keeps this order (a stale statement never climbs back over the current one). Returns a new array; entries that
 * did not move are the same objects.
 */
export function supersedeOpen<T extends { c: Candidate; score: number }>(ranked: readonly T[], input: OpenInput): T[] {
  const out = [...ranked];
  const window = Math.min(out.length, OPEN_WINDOW);
  const facts = new Map<T, Facts>();
  for (const entry of out.slice(0, window)) {
    const { c } = entry;
    if (!isStatement(c)) continue;
    const found = input.evidence?.(c) !== false;
    const all = words(c.text);
    facts.set(entry, {
      stems: new Set(
        all
          .filter((w) => !isStopword(w))
          .map(stemOf)
          .filter((x) => x.length > 3),
      ),
      names: namesIn(c.text),
      found,
      asked: found && all.some((w) => input.questionStems.has(stemOf(w))),
      change: announcesChange(c.text),
      at: input.eventOf(c),
    });
  }
  // A word shared by two statements links them when few of the listed statements contain it (pseudo-relevance
  // feedback keeps only distinctive words: "analyst", "Thursdays", not "work" or "today").
  const listed = new Map<string, number>();
  for (const f of facts.values()) for (const s of f.stems) listed.set(s, (listed.get(s) ?? 0) + 1);
  const distinctive = (s: string) => (listed.get(s) ?? 0) <= MAX_SHARED && !input.questionStems.has(s);
  const named = new Map<string, number>();
  for (const f of facts.values()) for (const n of f.names) named.set(n, (named.get(n) ?? 0) + 1);
  const replaced = new Set<T>();
  let anchors = 0;
  for (let i = 0; i < window && anchors < ANCHORS; i++) {
    let anchor = out[i] as T;
    let a = facts.get(anchor);
    if (!a?.asked || replaced.has(anchor)) continue;
    anchors++;
    for (;;) {
      const from: Facts = a;
      let best: { j: number; strength: number[] } | null = null;
      for (let j = i + 1; j < window; j++) {
        const later = out[j] as T;
        const b = facts.get(later);
        if (!b?.change || b.at <= from.at || replaced.has(later)) continue;
        // A fill hit is linked through a name it shares with the statement (one few listed statements name), or a
        // distinctive word that is not a count or a unit of time ("three", "weeks" say nothing of what it is about).
        const shared = b.found
          ? [...b.stems].filter((s) => from.stems.has(s) && distinctive(s)).length
          : [...b.stems].filter((s) => from.stems.has(s) && distinctive(s) && !GENERIC.test(s)).length +
            [...b.names].filter((n) => from.names.has(n) && !from.stems.has(stemOf(n)) && (named.get(n) ?? 0) <= MAX_SHARED).length;
        // Linked: both about what the question asks, or sharing a distinctive word beyond the question's own.
        const both = from.asked && b.asked ? 1 : 0;
        if (shared < MIN_SHARED && !both) continue;
        const strength = [shared, both, later.score];
        if (!best || isStronger(strength, best.strength)) best = { j, strength };
      }
      if (!best) break;
      const [entry] = out.splice(best.j, 1);
      if (!entry) break;
      out.splice(i, 0, entry);
      replaced.add(anchor);
      anchor = entry;
      a = facts.get(entry);
      if (!a) break;
    }
  }
  return nonIncreasing(out);
}

/** `ranked` was best first by score; only moved entries can score under the one below them: they take its score. */
function nonIncreasing<T extends { score: number }>(ordered: T[]): T[] {
  for (let i = ordered.length - 2; i >= 0; i--) {
    const [here, below] = [ordered[i], ordered[i + 1]];
    if (here && below && here.score < below.score) ordered[i] = { ...here, score: below.score };
  }
  return ordered;
}

const isStronger = (x: readonly number[], y: readonly number[]): boolean => {
  for (let k = 0; k < x.length; k++) if ((x[k] ?? 0) !== (y[k] ?? 0)) return (x[k] ?? 0) > (y[k] ?? 0);
  return false;
};
