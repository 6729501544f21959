/**
 * Which of the user's changing attributes a question asks about (the question side of slots.ts), so retrieval
 * can read the attribute's current statement even when it shares no word with the question.
 */
import { NOT_A_THING, QUESTIONS } from "./slot-cues";
import { PERSON } from "./slot-values";
import { favouriteOf, GENITIVE, slotLexiconsOn, thingAttribute } from "./slots";
import { isStopword, words } from "./text";
import { timeCues } from "./when";

/**
 * What or which thing a question asks about: the phrase after "what"/"which", whose last word is the thing
 * ("What car do I drive now?", "What's my go-to morning drink now?", "Which used car do I drive?").
 */
const ASKED_THING =
  /^\s*(?:what|which)(?:'s|\s+is|\s+are|\s+was|\s+were)?\s+(?:my\s+|our\s+)?((?:[a-z-]+\s+){0,2}?[a-z]+)(?='s|\s+(?:do|does|did|am|is|are|was|were|have|has|had|i|we|now|these|currently|nowadays|at|in|on|for|of|to|that|like)\b|\s*\?|\s*$)/;

/**
 * "my sister", "my friend's", "Sam's": the question is about someone else. A person or pet after "my" makes it
 * so; any other noun is the user's own thing ("What's in my mug?", "my commute").
 */
const ABOUT_OTHER = new RegExp(String.raw`\b(?:my|our)\s+(?:[a-z]+\s+)?${PERSON}\b|${GENITIVE}`);
const FAVOURITE_Q = /\b(?:my|user's)\s+(?:current\s+|all-time\s+)?(?:favou?rite|fave)\s+([a-z]+(?:\s+[a-z]+)?)/;

export type AskedSlot = {
  slot: string;
  /** The words of the question that named the attribute. */
  words: string[];
  /** The slot to read when no fact has `slot` ("Which team am I on at work?": the team, else the job). */
  fallback?: { slot: string; words: string[] };
};

/**
 * The user's slot a question asks about ("Where am I based these days?" -> "user|live_in") and the words of the
 * question that named the attribute ("based"), or null. A thing the question names ("What car...", "Which team
 * am I on at work now?") comes first: it says what is asked better than the other words of the question do.
 */
export function askedSlot(question: string): AskedSlot | null {
  if (!slotLexiconsOn()) return null;
  const q = question.toLowerCase().replace(/\u2019/g, "'");
  // Only questions: "Help me plan a workout at home" is not asking where the user lives.
  if (!/\?\s*$/.test(q) && !/^\s*(?:where|which|what|who|whom|whose|when|how|am|do|does|did|is|are)\b/.test(q)) return null;
  // The head of the phrase after "what"/"which": "my go-to morning drink" -> "drink".
  const thing = ASKED_THING.exec(q)?.[1]?.split(/\s+/).at(-1);
  const asked = thing && !isStopword(thing) && !NOT_A_THING.has(thing) ? thing : null;
  // "What's my hobby?", "What's my partner's name?" ask about the user's own hobby and partner, not someone else.
  const genitive = asked && thingAttribute(asked) === "partner" ? String.raw`(?:'s(?=\s+name))?` : "";
  const mine = asked ? q.replace(new RegExp(String.raw`\b(?:my|our)\s+(?:[a-z-]+\s+){0,2}?${asked}${genitive}\b`), asked) : q;
  if (!/\b(?:i|i'm|am|me|my|we|our|user|user's)\b/.test(q) || ABOUT_OTHER.test(mine.replace(/\buser's\b/g, "my"))) return null;
  // A question in the past tense asks about an event ("What did I drink at the wedding?"), not the current
  // value, unless it asks for what was replaced ("Where did I live before?").
  const cues = timeCues(q, 0);
  if (/\b(?:did|was|were)\b/.test(q) && !cues.past) return null;
  const fav = FAVOURITE_Q.exec(q);
  if (fav?.[1]) {
    const slot = favouriteOf(fav[1]);
    return slot ? { slot, words: words(fav[0]) } : null;
  }
  let cued: AskedSlot | null = null;
  for (const [attribute, re] of QUESTIONS) {
    const m = re.exec(q);
    if (!m) continue;
    cued = { slot: `user|${attribute}`, words: words(m[0]) };
    break;
  }
  // "Which team do I support now?" asks about a club one follows, not the group one works in.
  if (asked && /^(?:team|teams|club|side)$/.test(asked) && /\b(?:support|supports|cheer|fan|follow|watch)\b/.test(q)) return null;
  if (asked) {
    const attribute = thingAttribute(asked);
    if (!attribute.startsWith("thing ")) return { slot: `user|${attribute}`, words: [asked] };
    // Any other thing of the user's that changes, asked about now or before ("What car do I drive now?"), or
    // named where the rest of the question names an attribute ("Which team am I on at work?").
    if (cued) return { slot: `user|${attribute}`, words: [asked], fallback: cued };
    if (cues.current || cues.past) return { slot: `user|${attribute}`, words: [asked] };
  }
  return cued;
}

export const questionSlot = (question: string): string | null => askedSlot(question)?.slot ?? null;
