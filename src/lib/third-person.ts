/**
 * First person into third, for what the offline model and offline consolidation write about the user
 * ("Remember that I live in Berlin" -> "User lives in Berlin"). A rule, not a model: it handles the
 * common shapes of a statement about oneself and leaves the rest of the sentence as it was.
 */

/** Verbs whose third person is not the regular one, and forms that do not change (modals, the past). */
const IRREGULAR = new Map([
  ["have", "has"],
  ["am", "is"],
  ["do", "does"],
  ["don't", "doesn't"],
  ["go", "goes"],
]);
const UNCHANGED = new Set(
  (
    "can can't cannot could couldn't will won't would wouldn't should shouldn't must might may shall did didn't was wasn't were " +
    "had ate went got made took saw came left bought began became found gave knew met paid ran said sold sent spent stood thought told " +
    "won wrote grew drove flew fell felt kept lost brought built caught chose forgot heard held led meant put quit set shut slept spoke " +
    "taught threw woke wore"
  ).split(" "),
);
/** Words that may stand between "I" and the verb ("I no longer live", "I always forget"). */
const ADVERB = String.raw`(?:(?:always|never|usually|often|sometimes|also|still|really|just|rarely|mostly|generally|no longer|now|mainly)\s+)*`;

/** "live" -> "lives", "watch" -> "watches", "study" -> "studies"; the past and modals stay as they are. */
function thirdPersonVerb(verb: string): string {
  const v = verb.toLowerCase();
  const irregular = IRREGULAR.get(v);
  if (irregular) return irregular;
  if (UNCHANGED.has(v) || /ed$/.test(v)) return verb;
  if (/(?:s|sh|ch|x|z|o)$/.test(v)) return `${verb}es`;
  if (/[^aeiou]y$/.test(v)) return `${verb.slice(0, -1)}ies`;
  return `${verb}s`;
}

/** The request around a statement: "Please remember that", "Don't forget:", "Keep in mind that", "FYI". */
const REQUEST = /^(?:please\s+)?(?:remember|note|fyi|btw|don't forget|do not forget|keep in mind)(?:\s+that|:|,)?\s+/i;

export function thirdPerson(text: string): string {
  let t = text.trim().replace(REQUEST, "");
  t = t
    .replace(/^i'm\b/i, "User is")
    .replace(/^i've\b/i, "User has")
    .replace(/^i'd\b/i, "User would")
    .replace(/^i do not\b/i, "User does not");
  t = t.replace(new RegExp(String.raw`^i (${ADVERB})([\w']+)`, "i"), (_, adverbs: string, verb: string) => `User ${adverbs}${thirdPersonVerb(verb)}`);
  t = t
    .replace(/^my\b/i, "User's")
    .replace(/\bmy\b/gi, "their")
    .replace(/\bme\b/gi, "them")
    .replace(/\bi'm\b/gi, "they're")
    .replace(/\bi've\b/gi, "they've")
    .replace(/\bi'd\b/gi, "they'd")
    .replace(/\bi\b/gi, "they");
  t = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(t) ? t.slice(0, -1) : t;
}
