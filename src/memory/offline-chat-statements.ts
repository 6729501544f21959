/**
 * How the offline model reads a statement about the user (docs/offline-model.md, rule 5): whether it asks to be
 * remembered, its observation category, and the profile keys it states. The stand-in's English, for the offline
 * chat rules only (this capability's and the brain's); production never reads a message this way.
 */
import type { OfflineTurn } from "../model/offline-rule";
import { recordObservation } from "./tools";

const EXPLICIT = /\b(remember|don't forget|do not forget|note that|keep in mind)\b/i;

/** "Remember that ...", "keep in mind ...": the user asks for it to be kept. */
export const asksToRemember = (said: string) => EXPLICIT.test(said);

/**
 * "Call me Bob" names the user; "call me tomorrow", "call me back", "call me Monday", "please call me ASAP" and
 * "don't call me Robert" do not: only a capitalised word in lower case after its first letter, not a day or month.
 */
const CALL_ME =
  /(?<!\b(?:[Dd]on['’]t|[Dd]o not|[Nn]ever)\s)\b[Cc]all me\s+(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|July|August|September|October|November|December)\b)(\p{Lu}\p{Ll}[\p{L}'-]*)/u;

/** Observation categories, first match wins. */
const CATEGORIES: { category: string; when: RegExp }[] = [
  { category: "correction", when: /\b(actually|correction|not anymore|no longer|i was wrong)\b/i },
  { category: "project_details", when: /\b(i'm|i am|we're|we are) (working on|building|launching)\b|\bmy (project|startup|company|app)\b/i },
  { category: "preference", when: /\b(i prefer|i like|i love|i hate|i enjoy|i don't like|i do not like|always|never)\b/i },
  { category: "fact", when: /\b(my name is|i live|i work|i'm|i am|i have|i've|(?:i|we) (?:just )?(?:moved|relocated)|my (?:\w+ ){1,3}(is|are))\b/i },
  { category: "fact", when: CALL_ME },
];

/** The observation category of a statement worth keeping, or undefined: then nothing is kept of it. */
export const statementCategory = (said: string) => CATEGORIES.find((c) => c.when.test(said))?.category ?? (asksToRemember(said) ? "fact" : undefined);

/** Whether the turn can record what the user states as an observation (else the brain's MEMORY stands in). */
export const observes = (turn: Pick<OfflineTurn, "offers">) => turn.offers(recordObservation.name);

/**
 * "Porto now", "Acme these days", "Berlin last year": the time words say when the value became true or that it is
 * current; they are not part of it.
 */
const WHEN =
  /\s+(?:now|nowadays|these days|at the moment|currently|recently|today|yesterday|(?:last|this) (?:year|month|week|summer|spring|autumn|fall|winter)|(?:a|an|one|two|three|four|five|six|a few|several|\d+) (?:days?|weeks?|months?|years?) ago|in \d{4})$/i;
const clean = (s: string) =>
  s
    .trim()
    .replace(WHEN, "")
    .replace(/[.!\s]+$/, "");
/**
 * Where a profile value ends: punctuation, or a new clause ("... and my dog is called Pixel", "... with my wife",
 * "... since 2019"). A conjunction inside a name ("Trinidad and Tobago", "Johnson and Johnson") does not end it.
 */
const VALUE = String.raw`([^.,;!?]+?)(?=\s+(?:(?:and|but|so|because|while|where|with)\s+(?:i|i'm|i've|i'd|my|we|we're|our|he|she|they|it|it's|the|a|an|his|her|their)\b|since\b|for\s+\d|as\s+an?\s)|\s*[.,;!?]|\s*$)`;
const field = (lead: string) => new RegExp(String.raw`\b${lead}\s+${VALUE}`, "i");
const PROFILE_FIELDS: { key: string; when: RegExp }[] = [
  { key: "Name", when: /\b(?:my name is|i'm called|i am called)\s+([\p{L}][\p{L}'-]*)/iu },
  { key: "Name", when: CALL_ME },
  { key: "Location", when: field("(?:i|we) (?:(?:now |still )?live in|(?:just )?(?:moved|relocated) to)") },
  { key: "Employer", when: field("i work (?:at|for)") },
  { key: "Role", when: field(String.raw`i work (?:(?:at|for) [^.,;!?]+? )?as(?:\s+an?)?`) },
];

/** What a stated fact adds to the structured profile, e.g. "My name is Ana" -> {Name: "Ana"}. */
export function profileUpdates(said: string): Record<string, string> {
  const out: Record<string, string> = {};
  // One space between words and a bounded length keep the lazy value patterns linear (a run of 30,000 spaces
  // took seconds); a profile value is in the first sentences of a message anyway.
  const text = said.replace(/\s+/g, " ").slice(0, 2000);
  for (const f of PROFILE_FIELDS) {
    const m = f.when.exec(text);
    if (m?.[1] && !(f.key in out)) out[f.key] = clean(m[1]);
  }
  return out;
}
