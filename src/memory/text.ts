/**
 * Shared text normalisation for the local embedder, full-text queries and fact slots: word tokens,
 * a light Porter-style stemmer and an English stop list. Deterministic and dependency-free.
 */

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

const VOWEL = /[aeiouy]/;
const hasVowel = (s: string) => VOWEL.test(s);

const STEP2: [string, string][] = [
  ["ational", "ate"], ["tional", "tion"], ["enci", "ence"], ["anci", "ance"], ["izer", "ize"], ["ization", "ize"],
  ["ation", "ate"], ["ator", "ate"], ["alism", "al"], ["iveness", "ive"], ["fulness", "ful"], ["ousness", "ous"],
  ["aliti", "al"], ["iviti", "ive"], ["biliti", "ble"], ["icate", "ic"], ["alize", "al"], ["ical", "ic"], ["ness", ""],
];
const STEP4 = ["ement", "ment", "ance", "ence", "able", "ible", "ant", "ent", "ism", "ous", "ive", "ize", "ful", "er", "al", "ic"];

/** A light Porter-style stemmer: plurals, -ed/-ing, common derivational suffixes. */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies")) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) w = w.slice(0, -1);
  const ed = /(ed|ing)$/.exec(w);
  if (ed && w.length - ed[0].length >= 3 && hasVowel(w.slice(0, -ed[0].length))) {
    w = w.slice(0, -ed[0].length);
    if (/(at|bl|iz)$/.test(w)) w += "e";
    else if (/([^aeiouslz])\1$/.test(w)) w = w.slice(0, -1);
  }
  if (w.endsWith("y") && w.length > 3 && hasVowel(w.slice(0, -1))) w = `${w.slice(0, -1)}i`;
  for (const [from, to] of STEP2) {
    if (w.endsWith(from) && w.length - from.length >= 3) {
      w = w.slice(0, -from.length) + to;
      break;
    }
  }
  for (const suffix of STEP4) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 4) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  if (w.endsWith("e") && w.length > 4) w = w.slice(0, -1);
  return w;
}

export const isStopword = (word: string) => STOP.has(word);

/** Stemmed content words, in order. */
export function contentTerms(text: string): string[] {
  return words(text)
    .filter((w) => !STOP.has(w) && (w.length > 1 || /\d/.test(w)))
    .map(stem);
}

/** Collapses whitespace; the canonical form of a fact's text. */
export const normalizeText = (text: string) => text.replace(/\s+/g, " ").trim();

/** Caps a text at `max` words, keeping the beginning and its line breaks. */
export function capWords(text: string, max: number): string {
  const trimmed = text.trim();
  const re = /\S+/g;
  let count = 0;
  for (let m = re.exec(trimmed); m; m = re.exec(trimmed)) {
    if (++count === max) return trimmed.slice(0, m.index + m[0].length);
  }
  return trimmed;
}

export const wordCount = (text: string) => text.match(/\S+/g)?.length ?? 0;
