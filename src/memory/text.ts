/**
 * Words as the full-text index sees them: letter and digit tokens in any script, and Porter stems (the index's
 * own tokenizer). No word list: which words matter is measured on each user's own text (see `uncommonTerms`).
 */
import { stemmer } from "stemmer";

/** Lower-cased word tokens (letters and digits, any script). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Porter's stemmer (the `stemmer` package): the same algorithm as the full-text index's `porter` tokenizer, so
 * the terms the local embedder and the match signal see are the terms FTS5 indexed.
 */
export const stem = (word: string): string => (/\d/.test(word) ? word : stemmer(word));
