/**
 * `npm run eval:locomo -- --data PATH --ablate`: what each part of fact search earns on LoCoMo. Every turn is
 * imported through the public API as in locomo.test.ts, then every question is searched in process with the
 * product's tuning and with one part changed at a time (src/memory/ranking.ts `Tuning`), beside FTS5 bm25()
 * over the same texts. Figures, not assertions; skipped unless asked for.
 *
 * A search is its reads then its ranking (`searchFacts`); the reads depend on a few fields of the tuning only, so
 * each question's candidates are read once per distinct set of those and every variant ranks them: the same
 * results as calling `searchFacts` per variant, in a fraction of the time.
 */
import { env } from "cloudflare:test";
import { describe, inject, it } from "vitest";
import { readBatch } from "../../src/chat/read-batch";
import { planSearch, rankCandidates } from "../../src/memory/ranking";
import { TUNING, type Tuning } from "../../src/memory/retrieval";
import { readCandidates } from "../../src/memory/retrieval-reads";
import type { Candidates, SearchMode } from "../../src/memory/search-types";
import { createUser } from "../../test/helpers";
import { captured } from "../../test/memory-helpers";
import { recallAt } from "../recall/metrics";
import { fts5 } from "./baselines";
import { CATEGORIES, type Category, parseConversation } from "./dataset";
import { importTurns } from "./engram";

type Variant = { name: string; mode: SearchMode; tuning: Tuning };
const V = (name: string, change: Partial<Tuning>, mode: SearchMode = "hybrid"): Variant => ({ name, mode, tuning: { ...TUNING, ...change } });

const VARIANTS: Variant[] = [
  V("product (hybrid)", {}),
  V("full text alone", {}, "fulltext"),
  V("vector alone", {}, "vector"),
  V("FTS5's bm25() instead of the user's BM25", { lexical: "fts5" }),
  V("BM25 b 0.75 (the textbook value) instead of 0.2", { b: 0.75 }),
  V("BM25 b 0 (length ignored)", { b: 0 }),
  V("BM25 b 0.75, full text alone", { b: 0.75 }, "fulltext"),
  V("reciprocal rank fusion (k=60) instead of the weighted sum", { fusion: "rrf" }),
  V("local embedder weighted 0.25 (before)", { vectorWeight: 0.25 }),
  V("no common-word pruning", { commonShare: 1, commonFloor: 1e9 }),
  V("common share 0.1", { commonShare: 0.1 }),
  V("no neighbour turns", { neighbourShare: 0 }),
  V("no relevance feedback", { feedback: 0 }),
  V("relevance feedback 1", { feedback: 1 }),
  V("no period preference", { periodIn: 1, periodOut: 1 }),
  V("time phrase searched too", { stripTimePhrase: false }),
  V("no latest preference", { latest: 0 }),
  V("depth 100", { depth: 100 }),
];

/** The fields of the tuning the reads depend on (retrieval-reads.ts); the others only rank. */
const readKey = (t: Tuning) => JSON.stringify([t.depth, t.commonShare, t.commonFloor, t.stripTimePhrase]);

const input = inject("locomo");
type Row = { conversation: number; category: Category; found: Record<string, number>; match: number };
const rows: Row[] = [];

describe.skipIf(!input?.ablate)("LoCoMo ablation", () => {
  it("searches every question with each variant", { timeout: 3_600_000 }, async () => {
    const { deps } = await captured(null);
    for (const { number, raw } of input?.conversations ?? []) {
      const conv = parseConversation(number, raw);
      const user = await createUser("pro", 0);
      const imported = await importTurns(user.key, conv.turns);
      const fts = await fts5(env.DB, conv.turns, 5);
      for (const q of conv.questions) {
        if (!q.evidence.length) continue;
        let match = 0;
        const found: Record<string, number> = { "FTS5 bm25, OR of content words": recallAt(await fts.content(q.question), q.evidence, 5) > 0 ? 1 : 0 };
        const reads = new Map<string, Candidates>();
        for (const v of VARIANTS) {
          const request = { userId: user.id, query: q.question, k: 5, connectionIds: [] as string[], mode: v.mode };
          let read = reads.get(readKey(v.tuning));
          if (!read) {
            const batch = readBatch(deps.db);
            const reading = readCandidates(deps, planSearch({ ...request, mode: "hybrid" }, deps.now(), v.tuning), batch.read);
            await batch.flush();
            read = await reading;
            reads.set(readKey(v.tuning), read);
          }
          // One mode's lists only, as its own search reads them.
          const lists = { ...read, text: v.mode === "vector" ? [] : read.text, vector: v.mode === "fulltext" ? [] : read.vector };
          const r = rankCandidates(planSearch(request, deps.now(), v.tuning), lists, deps.embedder);
          const ranked = r.results.map((h) => imported.turnOf.get(h.id) ?? "");
          found[v.name] = recallAt(ranked, q.evidence, 5) > 0 ? 1 : 0;
          if (v === VARIANTS[0]) match = Math.max(0, ...r.results.map((h) => h.match));
        }
        rows.push({ conversation: number, category: q.category, found, match });
      }
      console.log(`ABLATION conversation ${number}: ${conv.questions.length} questions`);
    }
    const pct = (xs: number[]) => (xs.length ? ((100 * xs.reduce((a, b) => a + b, 0)) / xs.length).toFixed(1) : "n/a");
    const names = Object.keys(rows[0]?.found ?? {});
    const cats = [1, 2, 3, 4] as const;
    const lines = [
      `| variant | R@5 | ${cats.map((c) => `${CATEGORIES[c]} R@5`).join(" | ")} |`,
      `|---|---:|${cats.map(() => "---:").join("|")}|`,
      ...names.map((n) => {
        const answerable = rows.filter((r) => r.category !== 5);
        return `| ${n} | ${pct(answerable.map((r) => r.found[n] ?? 0))} | ${cats.map((c) => pct(rows.filter((r) => r.category === c).map((r) => r.found[n] ?? 0))).join(" | ")} |`;
      }),
    ];
    const numbers = [...new Set(rows.map((r) => r.conversation))].join(", ");
    // How `weak` (the best hit's match under a threshold) would split answerable from adversarial questions.
    const weakAt = [0.2, 0.25, 0.3, 0.35, 0.4, 0.45].map(
      (t) =>
        `| ${t} | ${pct(rows.filter((r) => r.category !== 5).map((r) => (r.match < t ? 1 : 0)))} | ${pct(rows.filter((r) => r.category === 5).map((r) => (r.match < t ? 1 : 0)))} |`,
    );
    console.log(`\n| weak under | answerable flagged weak | adversarial flagged weak |\n|---:|---:|---:|\n${weakAt.join("\n")}\n`);
    console.log(`\n## LoCoMo ablation, R@5 (conversations ${numbers})\n\n${lines.join("\n")}\n`);
  });
});
