/**
 * Contradiction detection without a model: a fact's slot names what it is about ("user|live_in",
 * "user|favourite colour", "default jira project|is"). A newer fact with the same slot and scope supersedes the
 * older one, which stays as history.
 *
 * Three kinds of statement get a slot:
 * - the attributes of a person that change over time and that people state in many ways without naming the
 *   attribute (slot-cues.ts): where they live, who they work for, who they are with, where they train, which
 *   phone they have, what they drink. The subject is the user for first-person statements ("we're moving to
 *   Porto", "I cancelled my membership and joined FlexHouse") and for third-person notes about the user ("User
 *   lives in Berlin"); another person otherwise ("My sister lives in Rome" -> "sister|live_in", "my sister's
 *   iPhone" -> "sister|phone"). Only a current, lasting state counts: plans ("thinking about switching to tea"),
 *   the past ("I used to train at X", "I lived in Rome as a student") and visits ("tried a class at X") do not;
 * - a first-person statement of change that names a value of an attribute's kind ("These days the first thing I
 *   have is matcha"), and a thing of the user's named as replaced or new ("Sold the old car and bought a Kia":
 *   "user|thing car", whatever the thing);
 * - "my favourite X is Y" / "Y is my favourite X": the user's favourite X;
 * - attribute-like copulas with a possessive or multi-word subject ("The default Jira project is PROJ").
 * Deliberately conservative elsewhere: "Python is fun" gets none, so liking two things never erases one of them.
 * slot-questions.ts reads the same attributes from a question about the user ("Where am I based these days?", "What
 * car do I drive now?"), so retrieval can fetch the current statement even when it shares no word with the question.
 */
import {
  type Attribute,
  BRANDS,
  CHANGE_EXTRA,
  CHANGE_MARK,
  type Cue,
  MEMBER_OF,
  NOT_A_THING,
  ONE_OFF,
  ONE_TIME,
  QUESTIONS,
  STATEMENTS,
  THING,
  VALUES,
} from "./slot-cues";
import { contentTerms, isStopword, stem, words } from "./text";

export type { Attribute };

/** Third-person notes about the user, as consolidation writes them ("User lives in Berlin"). */
const USER_NOTE = /^(?:the\s+)?(?:user|user's|users')\b/;
const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'd|we'll|me|us)\b/g;
/** The same words, for a yes/no test (a global regex keeps its position between calls). */
const FIRST_PERSON_ONE = new RegExp(FIRST_PERSON.source);
/** "Sam's", not "it's" or "what's". */
export const GENITIVE = String.raw`\b(?!(?:it|that|what|who|where|when|how|there|here|he|she|let|this)'s)[a-z]+'s\b`;
/** "my sister", "our friend Sam", "Sam's": someone else is the subject. Times of one's day are no one ("My mornings run on chai"). */
const OTHER_PERSON = new RegExp(
  String.raw`\b(?:my|our|his|her|their)\s+(?!(?:mornings?|evenings?|nights?|weekends?|days?|weekdays?|afternoons?|lunch(?:es|times?)?|breakfasts?)\b)[a-z]+|${GENITIVE}`,
  "g",
);

const COPULA = /^(.+?)\s+(?:is|are|was|were|has become|is now|changed to)\s+(.+)$|^(.+?)\s*[:=]\s+(.+)$/;
const PREPOSITIONS = new Set(["in", "on", "at", "by", "for", "with", "to", "from", "of", "until"]);
const POSSESSIVE = /\b(?:my|user's|users'|the user's|their|his|her)\b|'s\b/;

const lastIndex = (re: RegExp, text: string) => {
  let at = -1;
  for (const m of text.matchAll(re)) at = m.index;
  return at;
};

const OPENERS = new Set([
  "just",
  "so",
  "now",
  "today",
  "yesterday",
  "also",
  "well",
  "recently",
  "finally",
  "officially",
  "and",
  "but",
  "then",
  "still",
  "already",
]);

/**
 * Adverbs and verb forms open a sentence without a subject ("Finally settled in Leeds", "Transferred my
 * membership to X", "Lifting at X"): they are not names. Short names ending so ("Ted", "Fred") stay names.
 */
const VERB_FORM = /^(?:[A-Z][a-z]{2,}(?:ly|ed|ing))$/;

/** Who the words before the cue are about: the user, or the content words naming someone else. */
function subjectOf(before: string, original: string): string {
  if (USER_NOTE.test(before.trim())) return "user";
  const me = lastIndex(FIRST_PERSON, before);
  const other = lastIndex(OTHER_PERSON, before);
  // Names: a capitalised word past the sentence start, or a sentence that opens with one or two capitalised
  // words and then the cue ("Sam moved to Leeds"; not "Finally settled in Leeds").
  const prefix = original.slice(0, before.length);
  const opening = prefix.trim().split(/\s+/);
  const named =
    /^\W*\S+\s+.*\b[A-Z][a-z]+/.test(prefix) ||
    (opening.length <= 2 && opening.every((w) => /^[A-Z][a-z]+$/.test(w) && !VERB_FORM.test(w) && !OPENERS.has(w.toLowerCase())));
  if (me > other && me >= 0) return "user";
  if (other < 0 && !named) return "user";
  return contentTerms(before).join(" ") || "user";
}

/** Plans, wishes and the future are not the current state ("thinking about moving to Porto", "I'll eat vegan at the party"). */
const INTENT =
  /\b(?:need|needs|want|wants|wanted|thinking|considering|might|should|could|would|will|planning|plan\s+to|hoping|hope\s+to|tempted|wish|if|maybe|whether)\b|'ll\b/;
/** Said of the past ("I used to train at X", "when I was a student I lived in Rome"). */
const BYGONE =
  /\b(?:used\s+to|previously|formerly|back\s+(?:when|then)|when\s+i\s+was|as\s+a\s+(?:kid|child|student|teen|teenager)|years\s+ago|in\s+the\s+past)\b/;
/** Simple-past forms of state verbs: "I lived in Rome" is over; "I've lived in Rome for years" is not. */
const SIMPLE_PAST = /^(?:lived|worked|trained|lifted|exercised|swam|climbed|bouldered|resided)\b/;
const PERFECT = /\b(?:have|'ve|has|'s)\s+(?:[a-z]+ly\s+|always\s+|just\s+|now\s+)?$/;

/** The clause a cue sits in, up to the cue: words past a comma, a semicolon or a "but" belong to another clause. */
const clauseBefore = (before: string) => before.split(/[,;:.!?]|\bbut\b/).at(-1) ?? "";
const clauseAfter = (after: string) => after.split(/[,;:.!?]|\bbut\b/)[0] ?? "";

const global = new Map<RegExp, RegExp>();
const allMatches = (re: RegExp, text: string) => {
  let g = global.get(re);
  if (!g) global.set(re, (g = new RegExp(re.source, `${re.flags}g`)));
  return text.matchAll(g);
};

/** Whether a maker's name is written with its capitals in this stretch of the original text ("Pixel 8", "my Ford"). */
const namesBrand = (brand: RegExp, original: string) => original.split(/[^\p{L}]+/u).some((w) => brand.test(w));

/** The first match of the cue that states a current, lasting value (see the file comment), or null. */
function currentMatch(cue: Cue, lower: string, original: string): RegExpExecArray | RegExpMatchArray | null {
  if (cue.requires && !cue.requires.test(lower)) return null;
  for (const m of allMatches(cue.re, lower)) {
    const before = lower.slice(0, m.index);
    const clause = clauseBefore(before);
    if (INTENT.test(clause) || BYGONE.test(clause)) continue;
    if (SIMPLE_PAST.test(m[0]) && !PERFECT.test(before)) continue;
    if (cue.habitual && (ONE_OFF.test(clause) || ONE_OFF.test(clauseAfter(lower.slice(m.index))))) continue;
    if ((cue.habitual || cue.lasting) && (ONE_TIME.test(clause) || ONE_TIME.test(clauseAfter(lower.slice(m.index))))) continue;
    if (cue.brand && !(cue.generic?.test(m[0]) || namesBrand(cue.brand, original.slice(m.index, m.index + m[0].length)))) continue;
    return m;
  }
  return null;
}

/** "My favourite colour is green", "Green is my favourite colour now": the thing it is the favourite of. */
const FAVOURITE_FIRST =
  /\b(?:my|our|user's)\s+(?:new\s+|current\s+|all-time\s+|absolute\s+)?(?:favou?rite|fave)\s+([a-z]+(?:\s+[a-z]+)?)\s+(?:is|are|has\s+to\s+be|remains|would\s+be)\b/;
const FAVOURITE_LAST =
  /\b(?:is|are)\s+(?:now\s+|still\s+|easily\s+|definitely\s+)?(?:my|our|user's)\s+(?:new\s+|all-time\s+|absolute\s+)?(?:favou?rite|fave)\s+([a-z]+(?:\s+[a-z]+)?)/;
/** The noun phrase after "favourite", up to a function word: "place in town" -> "place". */
export function favouriteOf(phrase: string): string | null {
  const out: string[] = [];
  for (const w of words(phrase)) {
    const [term] = contentTerms(w);
    if (!term) break;
    out.push(term);
  }
  return out.length ? `user|favourite ${out.join(" ")}` : null;
}

/**
 * A first-person statement of change that names a value of an attribute's kind, without any cue of its own:
 * "These days the first thing I have is matcha, I've dropped the old habit" -> "user|drink". Plans, the past
 * and someone else's things do not count.
 */
function changedValue(lower: string, original: string): string | null {
  if (INTENT.test(lower) || BYGONE.test(lower) || new RegExp(GENITIVE).test(lower)) return null;
  if (/\b(?:my|our)\s+(?:sister|brother|mum|mom|mother|dad|father|friend|partner|wife|husband|son|daughter|boss|colleague)\b/.test(lower)) return null;
  const mark = CHANGE_MARK.exec(lower);
  // The user's own turn, in the first person or with no subject at all ("New routine: chai first thing",
  // "Switched to oat lattes"); "The new place downstairs is vegan" has one.
  if (mark && (/\b(?:i|i'm|i've|we|we're|we've|my|our|me|us)\b/.test(lower) || (SUBJECTLESS.test(lower) && !namesSomeone(original)))) {
    for (const [attribute, re] of VALUES) {
      const m = re.exec(lower);
      if (!m) continue;
      if (attribute === "gym" && ONE_OFF.test(lower)) continue;
      // A maker's name as written ("Pixel 7a"), not the common word.
      const brand = BRANDS[attribute];
      if (brand && !namesBrand(brand, original.slice(m.index, m.index + m[0].length))) continue;
      return `user|${attribute}`;
    }
  }
  const thing = THING.exec(lower);
  const noun = thing?.[2] ?? "";
  // "Sold the old car and bought a Fiesta": the thing replaced or new is the attribute. Said of someone named
  // ("Sam's old car"), or the old thing without a change ("my old phone is in a drawer"), it is not.
  if (thing && !NOT_A_THING.has(noun) && !isStopword(noun) && (thing[1] === "new" || THING_CHANGE.test(lower.replace(thing[0], "")))) {
    const attribute = thingAttribute(noun);
    // Someone named before it ("Sam bought the new Pixel") makes it theirs; a verb opening the sentence does not.
    const before = original.slice(0, thing.index).trim().split(/\s+/).filter(Boolean);
    const named = before.length >= 2 && /^[A-Z][a-z]+$/.test(before[0] ?? "") && !OPENERS.has((before[0] ?? "").toLowerCase());
    if (!named || FIRST_PERSON_ONE.test(lower)) return `user|${attribute}`;
  }
  return null;
}

/** The group the user belongs to at work, said now ("they moved me to the payments team"): "user|thing team". */
function memberOf(lower: string): string | null {
  for (const re of MEMBER_OF) {
    const m = re.exec(lower);
    if (!m?.[1]) continue;
    const clause = clauseBefore(lower.slice(0, m.index));
    if (INTENT.test(clause) || BYGONE.test(clause) || ONE_TIME.test(clause) || ONE_TIME.test(clauseAfter(lower.slice(m.index)))) continue;
    return `user|${thingAttribute(m[1])}`;
  }
  return null;
}

/** A turn that opens without a subject: a heading for one's routine, or a verb. */
const SUBJECTLESS = /^(?:new\s+(?:routine|habit|rule)\b|(?:these\s+days|nowadays|lately)\s*[,:]|[a-z]+(?:ed|ing)\b)/;

/** A capitalised word that does not open a sentence or a clause, nor is a maker's name: someone is named. */
const namesSomeone = (original: string) =>
  original.split(/[.!?:;]\s*/).some((part) =>
    part
      .split(/\s+/)
      .slice(1)
      .some((w) => /^[A-Z][a-z]/.test(w) && !Object.values(BRANDS).some((b) => b.test(w.replace(/\W+$/, "")))),
  );

/** A change around a thing named old: it was replaced ("sold the old car and bought...", "my old hobby, it's X now"). */
const THING_CHANGE = new RegExp(String.raw`${CHANGE_MARK.source}|${CHANGE_EXTRA.source}|\b(?:bought|got|traded|gave\s+away|replaced)\b`);

/** A thing's noun as a slot: a noun that names one of the known attributes maps to it ("phone", "gym"). */
export function thingAttribute(noun: string): string {
  const asAttribute = QUESTIONS.find(([, re]) => re.test(noun))?.[0];
  return asAttribute ?? `thing ${stem(noun)}`;
}

/**
 * Evaluation only: `globalThis.__engramSlotLexicons = false` switches the attribute lexicons off (no statement gets
 * a slot, no question names one), to measure ranking on changing facts of kinds no lexicon knows
 * (bench/recall/slots-off.ts). Nothing in the Worker sets it.
 */
export const slotLexiconsOn = (): boolean => (globalThis as { __engramSlotLexicons?: boolean }).__engramSlotLexicons !== false;

export function slotOf(text: string): string | null {
  if (!slotLexiconsOn()) return null;
  const trimmed = text
    .trim()
    .replace(/\u2019/g, "'")
    .replace(/[.!]+$/, "");
  if (trimmed.endsWith("?")) return null; // a question states nothing
  const lower = trimmed.toLowerCase();
  for (const cue of STATEMENTS) {
    const m = currentMatch(cue, lower, trimmed);
    if (!m) continue;
    if (cue.placeIsSubject) return /\b(?:i|we|my|our)\b/.test(lower) || !/\b(?:my|our|his|her|their)\s+[a-z]+\b/.test(lower) ? `user|${cue.attribute}` : null;
    return `${subjectOf(lower.slice(0, m.index), trimmed)}|${cue.attribute}`;
  }
  const group = memberOf(lower);
  if (group) return group;
  const fav = FAVOURITE_FIRST.exec(lower) ?? FAVOURITE_LAST.exec(lower);
  if (fav?.[1] && !INTENT.test(clauseBefore(lower.slice(0, fav.index)))) {
    const slot = favouriteOf(fav[1]);
    if (slot) return slot;
  }
  const changed = changedValue(lower, trimmed);
  if (changed) return changed;
  const m = COPULA.exec(lower);
  if (!m) return null;
  const subjectText = m[1] ?? m[3] ?? "";
  const predicate = words(m[2] ?? m[4] ?? "");
  const subject = contentTerms(subjectText);
  if (subject.length === 0 || (subject.length < 2 && !POSSESSIVE.test(subjectText))) return null;
  // "is due in March" and "is written in Rust" are different attributes of the same subject.
  const [first, second] = predicate;
  const qualifier = first && second && PREPOSITIONS.has(second) && !PREPOSITIONS.has(first) ? ` ${contentTerms(first).join("")}` : "";
  return `${subject.join(" ")}|is${qualifier}`;
}
