/**
 * English word handling for the local embedder, full-text queries and the offline stand-ins: word tokens,
 * Porter stems and an English stop list (with a few words every memory query carries: "user", "remember"...).
 * Nothing that writes facts uses it: what a fact means is decided by the model or the caller.
 */
import { stemmer } from "stemmer";

const STOP = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him
  himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
  our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
  these they this those through to too under until up very was we were what when where which while who whom why will
  with would you your yours yourself yourselves s t don doesn didn isn aren wasn weren ll ve re d m o y also us
  user users user's tell know please remember`.split(/\s+/),
);

/** Lower-cased word tokens (letters and digits, any script). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Porter's stemmer (the `stemmer` package): the same algorithm as the full-text index's `porter` tokenizer, so
 * the terms the local embedder, the slots and the match signal see are the terms FTS5 indexed.
 */
export const stem = (word: string): string => (/\d/.test(word) ? word : stemmer(word));

export const isStopword = (word: string) => STOP.has(word);

/** Stemmed content words, in order. */
export function contentTerms(text: string): string[] {
  return words(text)
    .filter((w) => !STOP.has(w) && (w.length > 1 || /\d/.test(w)))
    .map(stem);
}
