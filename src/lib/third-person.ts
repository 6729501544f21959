/**
 * First person into third, for what the offline model and offline consolidation write about the user
 * ("Remember that I live in Berlin" -> "User lives in Berlin"). A rule, not a model: it handles the
 * common shapes of a statement about oneself and leaves the rest of the sentence as it was.
 */
const VERBS = new Map(
  "prefer like love hate want need use live work own enjoy speak drink eat play run write read travel think plan move".split(" ").map((v) => [v, `${v}s`]),
);
VERBS.set("have", "has").set("do", "does").set("go", "goes").set("am", "is");

/** The request around a statement: "Please remember that", "Don't forget:", "Keep in mind that", "FYI". */
const REQUEST = /^(?:please\s+)?(?:remember|note|fyi|btw|don't forget|do not forget|keep in mind)(?:\s+that|:|,)?\s+/i;

export function thirdPerson(text: string): string {
  let t = text.trim().replace(REQUEST, "");
  t = t
    .replace(/^i'm\b/i, "User is")
    .replace(/^i've\b/i, "User has")
    .replace(/^i'd\b/i, "User would");
  t = t.replace(/^i (\w+)/i, (_, verb: string) => `User ${VERBS.get(verb.toLowerCase()) ?? verb}`);
  t = t
    .replace(/^my\b/i, "User's")
    .replace(/\bmy\b/gi, "their")
    .replace(/\bme\b/gi, "them")
    .replace(/\bi\b/g, "they");
  t = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(t) ? t.slice(0, -1) : t;
}
