/** FNV-1a, 32 bits: a fast, stable, non-cryptographic hash (ids of the offline model, embedding features). */
export function fnv1a(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** A rough token count (4 characters a token) where no tokenizer is at hand: offline model, fake API, embedder budget. */
export const approxTokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));

/** Collapses whitespace; the canonical form of a fact's text. */
export const normalizeText = (text: string) => text.replace(/\s+/g, " ").trim();

/** Caps a text at `max` words (runs of non-space), keeping the beginning and its line breaks. */
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
