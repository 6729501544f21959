/**
 * Line diff of two document versions, as a unified diff. Documents are capped at a few thousand
 * characters, so an LCS table over the lines that differ (common head and tail removed) is cheap;
 * a pathological pair falls back to "all removed, all added", which is still a correct diff.
 */
export type DiffResult = { diff: string; added: number; removed: number };

type Op = { kind: " " | "-" | "+"; line: string };

const MAX_CELLS = 4_000_000;
const CONTEXT = 3;

function lcsOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_CELLS) return [...a.map((line) => ({ kind: "-" as const, line })), ...b.map((line) => ({ kind: "+" as const, line }))];
  const width = m + 1;
  const table = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] =
        a[i] === b[j] ? (table[(i + 1) * width + j + 1] ?? 0) + 1 : Math.max(table[(i + 1) * width + j] ?? 0, table[i * width + j + 1] ?? 0);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: " ", line: a[i++] ?? "" });
      j++;
    } else if (i < n && (j === m || (table[(i + 1) * width + j] ?? 0) >= (table[i * width + j + 1] ?? 0))) ops.push({ kind: "-", line: a[i++] ?? "" });
    else ops.push({ kind: "+", line: b[j++] ?? "" });
  }
  return ops;
}

function diffOps(a: string[], b: string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const same = (lines: string[]) => lines.map((line) => ({ kind: " " as const, line }));
  return [...same(a.slice(0, head)), ...lcsOps(a.slice(head, a.length - tail), b.slice(head, b.length - tail)), ...same(a.slice(a.length - tail))];
}

/** Groups changes into hunks with `CONTEXT` unchanged lines around them. */
function hunks(ops: Op[]): string[] {
  const out: string[] = [];
  let k = 0;
  while (k < ops.length) {
    const firstChange = ops.findIndex((op, idx) => idx >= k && op.kind !== " ");
    if (firstChange < 0) break;
    let end = firstChange;
    for (let idx = firstChange; idx < ops.length && idx - end <= CONTEXT * 2; idx++) if (ops[idx]?.kind !== " ") end = idx;
    const start = Math.max(k, firstChange - CONTEXT);
    const stop = Math.min(ops.length, end + CONTEXT + 1);
    const before = ops.slice(0, start);
    const slice = ops.slice(start, stop);
    const aStart = before.filter((op) => op.kind !== "+").length + 1;
    const bStart = before.filter((op) => op.kind !== "-").length + 1;
    const aLen = slice.filter((op) => op.kind !== "+").length;
    const bLen = slice.filter((op) => op.kind !== "-").length;
    out.push(`@@ -${aLen ? aStart : aStart - 1},${aLen} +${bLen ? bStart : bStart - 1},${bLen} @@`, ...slice.map((op) => `${op.kind}${op.line}`));
    k = stop;
  }
  return out;
}

export function diffText(before: string, after: string, fromLabel: string, toLabel: string): DiffResult {
  const split = (s: string) => (s === "" ? [] : s.split("\n"));
  const ops = diffOps(split(before), split(after));
  const body = hunks(ops);
  return {
    diff: body.length ? [`--- ${fromLabel}`, `+++ ${toLabel}`, ...body].join("\n") : "",
    added: ops.filter((op) => op.kind === "+").length,
    removed: ops.filter((op) => op.kind === "-").length,
  };
}
