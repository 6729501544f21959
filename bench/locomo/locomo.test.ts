/**
 * `npm run eval:locomo -- --data PATH`: recall on LoCoMo's ten real conversations (docs/evaluation.md). Each
 * conversation is a new user: every turn imported verbatim through POST /v1/memory/facts, every question asked
 * through GET /v1/memory/facts/search in the three modes, beside FTS5 and MiniSearch BM25 over the same texts.
 * Figures, not assertions. Skipped when no data was provided (a plain `vitest -c bench/vitest.config.ts`).
 */
import { env } from "cloudflare:test";
import { describe, inject, it } from "vitest";
import { createUser } from "../../test/helpers";
import { fts5, miniSearch } from "./baselines";
import type { LocomoOutput } from "./context";
import { evidenceIds, parseConversation } from "./dataset";
import { importTurns, type Mode, search } from "./engram";
import { latencyTable, type Result, ranks, type System, scored, table, targetsSection } from "./tables";

const K = 25;
const input = inject("locomo");
const params = input?.params ?? "";
const results: Result[] = [];
const searchMs: Record<Mode, number[]> = { hybrid: [], fulltext: [], vector: [] };
const notes: string[] = [];
/** Per conversation: what the import did (superseded turns are left out of default searches). */
const imports: string[] = [];
const superseded = { turns: 0, hidden: 0 };
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function evaluate(number: number, raw: unknown) {
  const conv = parseConversation(number, raw);
  const { key } = await createUser("pro");
  const imported = await importTurns(key, conv.turns);
  const fts = await fts5(env.DB, conv.turns, K);
  const mini = miniSearch(conv.turns, K);
  const t0 = performance.now();
  for (const q of conv.questions) {
    const engram = async (mode: Mode) => {
      const r = await search(key, imported, q.question, mode, K, params);
      searchMs[mode].push(r.ms);
      return r.ranked.slice(0, K);
    };
    const ranked: Record<System, string[]> = {
      hybrid: await engram("hybrid"),
      fulltext: await engram("fulltext"),
      vector: await engram("vector"),
      fts5: await fts.content(q.question),
      fts5All: await fts.all(q.question),
      minisearch: await mini(q.question),
    };
    results.push({ conversation: number, sampleId: conv.sampleId, question: q, ranked });
    const where = `conversation ${number} question ${q.index}`;
    for (const e of q.repaired) notes.push(`${where}: evidence "${e}" read as ${evidenceIds([e]).join(", ")}`);
    if (q.unknown.length) notes.push(`${where}: evidence ${q.unknown.join(", ")} names no turn`);
    if (!q.evidence.length) notes.push(`${where} (category ${q.category}): no usable evidence, not scored`);
  }
  const evidence = new Set(conv.questions.flatMap((q) => q.evidence));
  const hidden = [...imported.superseded].filter((id) => evidence.has(id)).length;
  superseded.turns += imported.superseded.size;
  superseded.hidden += hidden;
  const row = [number, conv.sampleId, conv.turns.length, secs(imported.ms), imported.superseded.size, `${hidden} of ${evidence.size}`];
  imports.push(`| ${[...row, conv.questions.length, secs(performance.now() - t0)].join(" | ")} |`);
  console.log(`LOCOMO ${imports.at(-1)}`);
}

function report(): string {
  const numbers = (rs: Result[]) => [...new Set(rs.map((r) => r.conversation))].join(", ");
  const groups: [string, Result[]][] = [
    ["Development half", results.filter((r) => r.conversation <= 5)],
    ["Held-out half", results.filter((r) => r.conversation > 5)],
  ];
  const present = groups.filter(([, rs]) => rs.length);
  if (present.length > 1) present.push(["All", results]);
  return [
    `## LoCoMo recall, k=${K}${params ? `, engram search params: ${params}` : ""}`,
    ...present.map(([name, rs]) => table(`${name} (conversations ${numbers(rs)})`, rs)),
    [
      "| conversation | sample | turns | import | turns superseded on import | evidence turns among them | questions | searching (3 modes + baselines) |",
      "|---:|---|---:|---:|---:|---:|---:|---:|",
      ...imports,
    ].join("\n"),
    `Engram search latency over SELF.fetch inside workerd (its clock advances on I/O only), every question of this run:\n\n${latencyTable(searchMs)}`,
    `Scored: ${scored(results).length} of ${results.length} questions.${notes.length ? ` Data notes:\n${notes.map((n) => `- ${n}`).join("\n")}` : ""}`,
  ].join("\n\n");
}

describe.skipIf(!input)("LoCoMo recall (figures, not assertions)", () => {
  for (const { number, raw } of input?.conversations ?? []) it(`conversation ${number}`, () => evaluate(number, raw));

  it("report", ({ task }) => {
    console.log(`\n${report()}\n`);
    const output: LocomoOutput = {
      k: K,
      params,
      questions: results.map((r) => ({
        conversation: r.conversation,
        sample_id: r.sampleId,
        index: r.question.index,
        category: r.question.category,
        evidence: r.question.evidence,
        unknown: r.question.unknown,
        ranks: ranks(r),
      })),
      targets: targetsSection(results, superseded),
    };
    task.meta.locomo = output;
  });
});
