/**
 * Contradiction detection without a model: a fact's slot names what it is about ("user|live_in",
 * "default jira project|is"). A newer fact with the same slot and scope supersedes the older one.
 *
 * Two kinds of statement get a slot:
 * - the attributes of a person that change over time and that people state in many ways: where they live
 *   (`live_in`), who they work for (`work_at`), who they are with (`partner`). The subject is the user for
 *   first-person statements ("we're moving to Porto", "Felix and I broke up", "Signed the contract with Acme")
 *   and for third-person notes about the user ("User lives in Berlin"); another person otherwise
 *   ("My sister lives in Rome" -> "sister|live_in");
 * - attribute-like copulas with a possessive or multi-word subject ("The default Jira project is PROJ").
 * Deliberately conservative elsewhere: "Python is fun" gets none, so liking two things never erases one of them.
 * `questionSlot` reads the same attributes from a question about the user ("Where am I based these days?"), so
 * retrieval can fetch the current statement even when it shares no word with the question.
 */
import { contentTerms, words } from "./text";

export type Attribute = "live_in" | "work_at" | "partner";

/** Statement cues. `subjectFirst`: the words before the cue name who it is about. */
const STATEMENTS: { attribute: Attribute; re: RegExp; placeIsSubject?: boolean }[] = [
  {
    attribute: "live_in",
    re: /\b(?:live|lives|living|lived|reside|resides|residing|relocate|relocated|relocating|moved|moves|moving|settled|settling)\s+(?:in|to|into|at|near|back to)\b/,
  },
  { attribute: "live_in", re: /\bbased\s+(?:in|out of)\b/ },
  { attribute: "live_in", re: /\b(?:new|our|my)\s+(?:place|flat|apartment|house|home)\s+(?:in|near)\b/ },
  { attribute: "live_in", re: /\b(?:lease|mortgage|keys)\s+(?:on|to|for)\s+(?:a|an|the|our|my)\s+(?:new\s+)?(?:place|flat|apartment|house|home)\b/ },
  { attribute: "live_in", re: /\b(?:feels|felt)\s+like\s+home\b/, placeIsSubject: true },
  { attribute: "work_at", re: /\b(?:work|works|working|worked|employed)\s+(?:as\s+(?:an?\s+)?[\w\s-]{1,40}?\s+)?(?:at|for)\b/ },
  { attribute: "work_at", re: /\b(?:hired\s+by|(?:job|offer|contract|position|role)\s+(?:at|with|from)|my\s+employer|day\s+job)\b/ },
  {
    attribute: "partner",
    re: /\b(?:dating|seeing\s+someone|(?:a\s+)?(?:first|second|third|another)\s+date\s+with|broke\s+up|split\s+up|called\s+it\s+off|made\s+it\s+official|in\s+a\s+relationship|got\s+(?:married|engaged)|(?:my|our)\s+(?:boyfriend|girlfriend|partner|fianc[eé]e?|husband|wife))\b/,
  },
];

/** Third-person notes about the user, as consolidation writes them ("User lives in Berlin"). */
const USER_NOTE = /^(?:the\s+)?(?:user|user's|users')\b/;
const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'd|we'll|me|us)\b/g;
/** "Sam's", not "it's" or "what's". */
const GENITIVE = String.raw`\b(?!(?:it|that|what|who|where|when|how|there|here|he|she|let|this)'s)[a-z]+'s\b`;
/** "my sister", "our friend Sam", "Sam's": someone else is the subject. */
const OTHER_PERSON = new RegExp(String.raw`\b(?:my|our|his|her|their)\s+[a-z]+|${GENITIVE}`, "g");

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
    (opening.length <= 2 && opening.every((w) => /^[A-Z][a-z]+$/.test(w) && !/ly$/.test(w) && !OPENERS.has(w.toLowerCase())));
  if (me > other && me >= 0) return "user";
  if (other < 0 && !named) return "user";
  return contentTerms(before).join(" ") || "user";
}

export function slotOf(text: string): string | null {
  const trimmed = text
    .trim()
    .replace(/\u2019/g, "'")
    .replace(/[.!]+$/, "");
  if (trimmed.endsWith("?")) return null; // a question states nothing
  const lower = trimmed.toLowerCase();
  for (const { attribute, re, placeIsSubject } of STATEMENTS) {
    const m = re.exec(lower);
    if (!m) continue;
    if (placeIsSubject) return /\b(?:i|we|my|our)\b/.test(lower) || !/\b(?:my|our|his|her|their)\s+[a-z]+\b/.test(lower) ? `user|${attribute}` : null;
    return `${subjectOf(lower.slice(0, m.index), trimmed)}|${attribute}`;
  }
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

/** Question cues: which of the user's changing attributes a question asks about. */
const QUESTIONS: [Attribute, RegExp][] = [
  ["work_at", /\b(?:employer|employs|employed|company|firm|job|work|working)\b(?!\s+out)/],
  ["live_in", /\b(?:live|living|reside|residing|based|home|address|city|town)\b/],
  ["partner", /\b(?:partner|dating|seeing\s+(?:anyone|someone)|boyfriend|girlfriend|significant\s+other|relationship|spouse|husband|wife|together\s+with)\b/],
];
/** "my sister", "my friend's": the question is about someone else (attribute nouns themselves excepted). */
const ABOUT_OTHER = new RegExp(
  String.raw`\b(?:my|our)\s+(?!(?:partner|boyfriend|girlfriend|significant|spouse|husband|wife|employer|company|firm|job|home|address|city|town|current|new|main|present)\b)[a-z]+\b|${GENITIVE}`,
);

/** The user's slot a question asks about ("Where am I based these days?" -> "user|live_in"), or null. */
export function questionSlot(question: string): string | null {
  const q = question.toLowerCase().replace(/\u2019/g, "'");
  // Only questions: "Help me plan a workout at home" is not asking where the user lives.
  if (!/\?\s*$/.test(q) && !/^\s*(?:where|which|what|who|whom|whose|when|how|am|do|does|did|is|are)\b/.test(q)) return null;
  if (!/\b(?:i|i'm|am|me|my|we|our|user|user's)\b/.test(q) || ABOUT_OTHER.test(q.replace(/\buser's\b/g, "my"))) return null;
  for (const [attribute, re] of QUESTIONS) if (re.test(q)) return `user|${attribute}`;
  return null;
}
