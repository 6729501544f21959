/** Ranking metrics for the recall evaluation. Lists are ranked keys (best first); relevance is binary. */

/** Share of the evidence found in the first k (multi-hop questions need every turn: partial credit). */
export function recallAt(ranked: readonly string[], evidence: readonly string[], k: number): number {
  if (!evidence.length) return 0;
  const top = new Set(ranked.slice(0, k));
  return evidence.filter((e) => top.has(e)).length / evidence.length;
}

export function ndcgAt(ranked: readonly string[], evidence: readonly string[], k: number): number {
  const relevant = new Set(evidence);
  let dcg = 0;
  ranked.slice(0, k).forEach((key, i) => {
    if (relevant.has(key)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(k, evidence.length); i++) ideal += 1 / Math.log2(i + 2);
  return ideal ? dcg / ideal : 0;
}

/** The current statement is in the list and above every stale statement of the same attribute. */
export function currentFirst(ranked: readonly string[], current: string, stale: readonly string[]): boolean {
  const at = ranked.indexOf(current);
  if (at < 0) return false;
  return stale.every((s) => {
    const i = ranked.indexOf(s);
    return i < 0 || i > at;
  });
}

/** Area under the ROC curve: the chance that a random positive scores above a random negative (ties count half). */
export function auc(positives: readonly number[], negatives: readonly number[]): number {
  if (!positives.length || !negatives.length) return NaN;
  let wins = 0;
  for (const p of positives) for (const n of negatives) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / (positives.length * negatives.length);
}

/**
 * McNemar's exact test for two systems asked the same questions: `onlyA` questions only the first answered,
 * `onlyB` only the second. The two-sided p-value of a split that uneven if either system were as likely to win
 * each disputed question (a binomial with p = 1/2). Questions both or neither answered say nothing about which is
 * better, so a ratio over a small category can move by one question while p stays near 1.
 */
export function mcnemarExact(onlyA: number, onlyB: number): number {
  const n = onlyA + onlyB;
  // In logs: 2^-n underflows past n = 1074 while the terms further in the tail do not.
  let tail = 0;
  let logTerm = -n * Math.LN2; // ln(C(n, 0) / 2^n)
  for (let i = 0; i <= Math.min(onlyA, onlyB); i++) {
    tail += Math.exp(logTerm);
    logTerm += Math.log((n - i) / (i + 1));
  }
  return Math.min(1, 2 * tail);
}
