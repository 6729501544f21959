/** FNV-1a, 32 bits: a fast, stable, non-cryptographic hash (ids of the offline model, embedding features). */
export function fnv1a(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** A rough token count (4 characters a token) where no tokenizer is at hand: offline model, fake API, embedder budget. */
export const approxTokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));
