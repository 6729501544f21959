/** A weighted random draw over `items` (weights need not sum to 1), for the benches' deterministic corpora. */
export function weightedDraw<T>(items: readonly T[], weights: readonly number[], fallback: T): (r: () => number) => T {
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  const cdf = weights.map((w) => (acc += w / total));
  return (r) => {
    const x = r();
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] ?? 1) < x) lo = mid + 1;
      else hi = mid;
    }
    return items[lo] ?? fallback;
  };
}
