/**
 * The figures of a run, as markdown tables to paste into docs. A question counts as found at k when ANY of its
 * evidence turns is in the first k (the stricter "all" columns need every one); NDCG@10 has binary relevance over
 * the evidence turns. Overall is categories 1-4; adversarial questions (5) ask about something the conversation
 * does not say, so their evidence turn is a near miss, shown in a column of its own.
 */
import { mcnemarExact, ndcgAt, recallAt } from "../recall/metrics";
import { CATEGORIES, type Category, type Question } from "./dataset";

export const SYSTEMS = {
  hybrid: "engram hybrid",
  fulltext: "engram fulltext",
  vector: "engram vector",
  fts5: "FTS5 bm25, OR of content words",
  fts5All: "FTS5 bm25, OR of all words",
  minisearch: "MiniSearch BM25, content words",
} as const;
export type System = keyof typeof SYSTEMS;

export type Result = { conversation: number; sampleId: string; question: Question; ranked: Record<System, string[]> };

const anyAt = (r: Result, s: System, k: number) => (recallAt(r.ranked[s], r.question.evidence, k) > 0 ? 1 : 0);
const allAt = (r: Result, s: System, k: number) => (recallAt(r.ranked[s], r.question.evidence, k) === 1 ? 1 : 0);
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const pct = (x: number) => (Number.isFinite(x) ? (100 * x).toFixed(1) : "n/a");

const ANSWERABLE: Category[] = [1, 2, 3, 4];
/** Recall@5 of one system over some questions. */
const r5 = (s: System, xs: readonly Result[]) => mean(xs.map((r) => anyAt(r, s, 5)));
/** How many of the questions system `a` found in its top 5 and `b` did not. */
const onlyBy = (xs: readonly Result[], a: System, b: System) => xs.filter((r) => anyAt(r, a, 5) > anyAt(r, b, 5)).length;

/** The results a table reads: questions with at least one evidence turn that exists. */
export const scored = (results: readonly Result[]) => results.filter((r) => r.question.evidence.length > 0);

export function table(title: string, results: readonly Result[]): string {
  const rs = scored(results);
  const overall = rs.filter((r) => ANSWERABLE.includes(r.question.category));
  const ofCategory = (c: Category) => rs.filter((r) => r.question.category === c);
  const cats = ([1, 2, 3, 4, 5] as const).map((c) => ({ c, rs: ofCategory(c) }));
  const head = ["system", "R@5", "R@10", "R@25", "NDCG@10", "R@5 all-ev", "R@25 all-ev", ...cats.map(({ c, rs }) => `${CATEGORIES[c]} R@5 (n=${rs.length})`)];
  const lines = [`### ${title}: ${overall.length} questions (categories 1-4), ${ofCategory(5).length} adversarial`, ""];
  lines.push(`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i ? "---:" : "---")).join("|")}|`);
  for (const s of Object.keys(SYSTEMS) as System[]) {
    const row = [
      SYSTEMS[s],
      ...[5, 10, 25].map((k) => pct(mean(overall.map((r) => anyAt(r, s, k))))),
      pct(mean(overall.map((r) => ndcgAt(r.ranked[s], r.question.evidence, 10)))),
      ...[5, 25].map((k) => pct(mean(overall.map((r) => allAt(r, s, k))))),
      ...cats.map(({ rs }) => pct(r5(s, rs))),
    ];
    lines.push(`| ${row.join(" | ")} |`);
  }
  const ratio = (xs: readonly Result[]) => {
    const b = r5("fts5", xs);
    return b > 0 ? (r5("hybrid", xs) / b).toFixed(2) : "n/a";
  };
  lines.push(`| hybrid / FTS5 content words, R@5 | ${ratio(overall)} | | | | | | ${cats.map(({ rs }) => ratio(rs)).join(" | ")} |`);
  // Paired: the questions one found in its top 5 and the other did not, and how likely so uneven a split is by chance.
  const paired = (xs: readonly Result[]) => {
    const [h, f] = [onlyBy(xs, "hybrid", "fts5"), onlyBy(xs, "fts5", "hybrid")];
    return `${h} / ${f}, p ${mcnemarExact(h, f).toPrecision(2)}`;
  };
  lines.push(`| found only by hybrid / only by FTS5 (McNemar exact p) | ${paired(overall)} | | | | | | ${cats.map(({ rs }) => paired(rs)).join(" | ")} |`);
  return lines.join("\n");
}

export function latencyTable(ms: Record<string, number[]>): string {
  const at = (xs: number[], q: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
  };
  const lines = ["| engram search mode | requests | median ms | p95 ms |", "|---|---:|---:|---:|"];
  for (const [mode, xs] of Object.entries(ms)) lines.push(`| ${mode} | ${xs.length} | ${at(xs, 0.5).toFixed(1)} | ${at(xs, 0.95).toFixed(1)} |`);
  return lines.join("\n");
}

/** Per question, the 1-based rank of each evidence turn in each system's list (null: not in the first k). */
export const ranks = (r: Result) =>
  Object.fromEntries((Object.keys(SYSTEMS) as System[]).map((s) => [s, r.question.evidence.map((e) => r.ranked[s].indexOf(e) + 1 || null)]));

/**
 * The issue's targets, each marked met or missed, for BENCHMARKS.md (written by scripts/eval-locomo.mjs when a run
 * covers all ten conversations with the default search): hybrid recall@5 at least 1.1x FTS5's and full text at
 * least FTS5's, on each half and on all ten; hybrid never under FTS5 on a category; nothing superseded on import.
 */
export function targetsSection(results: readonly Result[], superseded: { turns: number; hidden: number }): string {
  const halves: [string, Result[]][] = [
    ["development (1-5)", scored(results).filter((r) => r.conversation <= 5)],
    ["held out (6-10)", scored(results).filter((r) => r.conversation > 5)],
    ["all ten", scored(results)],
  ];
  const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
  const lines = [
    "| half | questions | hybrid R@5 | full text | FTS5 bm25() | MiniSearch | hybrid / FTS5 | full text / FTS5 | only hybrid / only FTS5 (McNemar p) | target: hybrid >= 1.1x, full text >= 1x |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const [name, all] of halves) {
    const xs = all.filter((r) => ANSWERABLE.includes(r.question.category));
    const [h, f, b, m] = [r5("hybrid", xs), r5("fulltext", xs), r5("fts5", xs), r5("minisearch", xs)];
    const [oh, ob] = [onlyBy(xs, "hybrid", "fts5"), onlyBy(xs, "fts5", "hybrid")];
    lines.push(
      `| ${name} | ${xs.length} | ${pct(h)} | ${pct(f)} | ${pct(b)} | ${pct(m)} | ${(h / b).toFixed(2)} | ${(f / b).toFixed(2)} | ${oh} / ${ob} (${mcnemarExact(oh, ob).toPrecision(2)}) | ${verdict(h >= 1.1 * b && f >= b)} |`,
    );
  }
  lines.push(
    "",
    `| category: hybrid / FTS5 R@5 (only hybrid / only FTS5) | ${halves.map(([n]) => n).join(" | ")} | target: hybrid >= FTS5 |`,
    `|---|${halves.map(() => "---").join("|")}|---|`,
  );
  for (const c of [1, 2, 3, 4, 5] as const) {
    const cells = halves.map(([, all]) => {
      const xs = all.filter((r) => r.question.category === c);
      return {
        text: `${pct(r5("hybrid", xs))} / ${pct(r5("fts5", xs))} (${onlyBy(xs, "hybrid", "fts5")} / ${onlyBy(xs, "fts5", "hybrid")})`,
        ok: r5("hybrid", xs) >= r5("fts5", xs),
      };
    });
    const missed = halves.filter((_, i) => !cells[i]?.ok).map(([n]) => n);
    lines.push(
      `| ${CATEGORIES[c]} (n=${halves[2]?.[1].filter((r) => r.question.category === c).length}) | ${cells.map((x) => x.text).join(" | ")} | ${missed.length ? `**missed** (${missed.join(", ")})` : "met"} |`,
    );
  }
  lines.push(
    "",
    `Turns superseded by a verbatim import: ${superseded.turns} (evidence turns among them: ${superseded.hidden}); target 0: ${verdict(superseded.turns === 0)}.`,
  );
  return lines.join("\n");
}
