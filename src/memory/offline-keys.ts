/**
 * The offline model's keys: a stand-in for Claude's judgement (docs/offline-model.md), used only by the offline
 * consolidation. English rules name the changing attribute a third-person fact states, the way the consolidation
 * schema asks Claude to: the subject first ("user", or "sister" for "User's sister Clara ..."), then one of a
 * handful of attributes. Anything else gets no key, and so replaces nothing. Production never runs these rules:
 * there, the key is the model's or the API caller's.
 */

/**
 * "User ..." or "User's sister [Clara] ...", as thirdPerson writes statements ("Actually, they ..." after a
 * correction's opening word). No `i` flag: with it, \p{Lu} would match lower case too.
 */
const SUBJECT = /^(?:Actually,?\s+they|User)(?:'s\s+(\p{Ll}+)(?:\s+\p{Lu}[\p{L}'-]*)?)?\s+(.+)$/u;

/**
 * What the subject does, by attribute: a current, lasting state with its value named (a capitalised place or firm).
 * "live"/"work": after "they", the subject of a correction.
 */
const PREDICATES: [attribute: string, predicate: RegExp][] = [
  ["home_city", /^(?:now\s+)?(?:lives?|is living|has lived|moved|has moved|relocated|has relocated)\s+(?:in|to)\s+\p{Lu}/u],
  ["employer", /^(?:now\s+)?(?:works?|is working|started working|has started working)\s+(?:at|for)\s+\p{Lu}/u],
  ["occupation", /^(?:now\s+)?works?\s+as\s+/u],
  ["partner", /^is\s+(?:(?:married|engaged)\s+to|dating)\s+\p{Lu}/u],
];

/** "User's name is Ana", "User's wife is Mia": the noun names the user's attribute. */
const NAMED_BY_NOUN: Record<string, string> = {
  name: "name",
  partner: "partner",
  wife: "partner",
  husband: "partner",
  girlfriend: "partner",
  boyfriend: "partner",
  employer: "employer",
};

/** The key of a third-person statement ("User moved to Lisbon" -> user.home_city), or null. */
export function statementKey(text: string): string | null {
  const m = SUBJECT.exec(text.trim());
  if (!m) return null;
  const [, noun, rest = ""] = m;
  const byNoun = noun ? NAMED_BY_NOUN[noun] : undefined;
  if (byNoun && /^is\s+\p{Lu}/u.test(rest)) return `user.${byNoun}`;
  const attribute = PREDICATES.find(([, predicate]) => predicate.test(rest))?.[0];
  return attribute ? `${noun ?? "user"}.${attribute}` : null;
}

/** The profile keys the offline chat model fills (offline-chat-statements.ts), by the attribute their facts state. */
const PROFILE_KEYS: Record<string, string> = { Name: "name", Location: "home_city", Employer: "employer", Role: "occupation" };

/** The key of a fact written from a profile key: a profile key holds one value, so it is a changing attribute. */
export const profileKey = (scaffoldKey: string): string => `user.${PROFILE_KEYS[scaffoldKey] ?? scaffoldKey.trim().toLowerCase().replace(/\s+/g, "_")}`;
