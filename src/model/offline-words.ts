/**
 * English word handling the offline model's rules share (its own and every capability's): what a question is,
 * and which remembered items a message is about. The stand-in's, never the production path's.
 */

/** A question is never a statement to remember ("Do you remember my name?"). */
export const isQuestion = (said: string) =>
  /\?\s*$/.test(said) || /^(do|does|did|what|what's|who|whom|where|when|why|how|can|could|is|are|am|will|would|should|have|has)\b/i.test(said.trim());

/** Words that say nothing about which memory a message is about. */
const FILLER = new Set(
  "the and that this what where who when which about your you please could would will can should want like need just also okay forget forgetting remember remembering stop don't not save store keep user user's my me i i'm i've we our any all everything anything thing things said told".split(
    " ",
  ),
);

/** The words of `text` that can name a memory. */
export const memoryWords = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .match(/[\p{L}\d'-]{3,}/gu)
      ?.filter((w) => !FILLER.has(w)) ?? [],
  );

/** How many of the words `asked` `text` has. */
export const sharedWords = (asked: Set<string>, text: string) => [...memoryWords(text)].filter((w) => asked.has(w)).length;

/**
 * The items that share the most of the message's words ("forget that I live in Lyon" and "where do I live?" name
 * "I live in Lyon"; "I live in Lyon" names it rather than "I live with two cats"); none when no item shares one.
 */
export function bestMatches<T extends { text: string }>(said: string, items: readonly T[]): T[] {
  const asked = memoryWords(said);
  const scored = items.map((item) => ({ item, words: sharedWords(asked, item.text) }));
  const most = Math.max(0, ...scored.map((s) => s.words));
  return most ? scored.filter((s) => s.words === most).map((s) => s.item) : [];
}
