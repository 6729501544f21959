/**
 * The English stop list of the offline stand-ins (the local embedder and the offline lesson extractor), with a
 * few words every memory query carries ("user", "remember"). The production path never loads it: there, which
 * words matter is measured on the user's own text.
 */
import { stem, words } from "./text";

const STOP = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him
  himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
  our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
  these they this those through to too under until up very was we were what when where which while who whom why will
  with would you your yours yourself yourselves s t don doesn didn isn aren wasn weren ll ve re d m o y also us
  user users user's tell know please remember`.split(/\s+/),
);

export const isStopword = (word: string) => STOP.has(word);

/** Stemmed content words, in order. */
export function contentTerms(text: string): string[] {
  return words(text)
    .filter((w) => !STOP.has(w) && (w.length > 1 || /\d/.test(w)))
    .map(stem);
}
