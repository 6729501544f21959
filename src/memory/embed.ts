/**
 * The embedding seam: text -> L2-normalised sparse vectors, and the vector arithmetic both sides share.
 * Production embeds with Workers AI (embed-workers-ai.ts: dense bge vectors); offline and in tests a
 * deterministic feature-hashing embedder stands in behind the same interface (offline-embed.ts).
 */

export type SparseVector = { indices: number[]; values: number[] };

export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** Cosine similarity under which a match is noise for this embedder. */
  readonly minScore: number;
  /** How much its cosine counts next to full-text relevance (scaled to 1 for the best match) in hybrid fusion. */
  readonly fusionWeight?: number;
  embed(texts: string[]): Promise<{ vectors: SparseVector[]; tokens: number }>;
}

export function normalize(acc: Map<number, number>): SparseVector {
  const entries = [...acc.entries()].filter(([, v]) => v !== 0).sort((a, b) => a[0] - b[0]);
  const norm = Math.sqrt(entries.reduce((n, [, v]) => n + v * v, 0)) || 1;
  return { indices: entries.map(([i]) => i), values: entries.map(([, v]) => v / norm) };
}

/** Dot product of two sparse vectors with ascending indices (= cosine for normalised vectors). */
export function dot(a: SparseVector, b: SparseVector): number {
  let i = 0;
  let j = 0;
  let sum = 0;
  while (i < a.indices.length && j < b.indices.length) {
    const ai = a.indices[i] ?? 0;
    const bj = b.indices[j] ?? 0;
    if (ai === bj) sum += (a.values[i++] ?? 0) * (b.values[j++] ?? 0);
    else if (ai < bj) i++;
    else j++;
  }
  return sum;
}

export function toDense(v: SparseVector, dimensions: number): number[] {
  const out = new Array<number>(dimensions).fill(0);
  v.indices.forEach((i, k) => {
    out[i] = v.values[k] ?? 0;
  });
  return out;
}
