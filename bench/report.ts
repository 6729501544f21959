// Micro-benchmarks run inside workerd (the test pool) print one `BENCH_RESULT` line per metric;
// `npm run bench` collects them into BENCHMARKS.md. Inside workerd the clock advances on I/O, so these
// figures time D1 and storage work faithfully and pure CPU work coarsely (whole milliseconds).
/** Upper bounds per metric ("*": every metric without its own entry); scripts/bench.mjs marks each row met or missed. */
export type BenchTargets = Record<string, Partial<Record<"p50" | "p95" | "mean" | "max", number>>>;
export type BenchGroup = { group: string; target: string; targets?: BenchTargets; description: string };

export function report(group: BenchGroup, metric: string, samples: number[]): void {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  const summary = { ...group, metric, n: s.length, p50: at(0.5), p95: at(0.95), mean, min: s[0] ?? NaN, max: s.at(-1) ?? NaN };
  console.log(`BENCH_RESULT ${JSON.stringify(summary)}`);
}

/** Times `fn` `runs` times after `warmup` untimed runs; milliseconds per run. */
export async function sample(runs: number, warmup: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}
