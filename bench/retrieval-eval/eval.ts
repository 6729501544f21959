/**
 * Retrieval evaluation over the labelled set in dataset.json: recall@5, recall@10 and NDCG@5 (binary
 * relevance), overall and by question kind. The retriever is a parameter, so the same set scores hybrid,
 * full-text-only and vector-only retrieval. Run: npx vitest run --maxWorkers=2 test/memory-eval.test.ts
 */
export type Question = { q: string; relevant: string[]; kind: "lexical" | "paraphrase" };
export type Conversation = { id: string; turns: string[]; facts: { key: string; text: string }[]; questions: Question[] };
export type Dataset = { about: string; conversations: Conversation[] };

/** Returns fact keys, best first. */
export type Retriever = (conversation: Conversation, query: string, k: number) => Promise<string[]>;

export type Metrics = { n: number; recall5: number; recall10: number; ndcg5: number };
export type Report = { overall: Metrics; byKind: Record<string, Metrics>; misses: { conversation: string; q: string; got: string[] }[] };

export function recallAt(ranked: readonly string[], relevant: readonly string[], k: number): number {
  if (!relevant.length) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((r) => top.has(r)).length / relevant.length;
}

export function ndcgAt(ranked: readonly string[], relevant: readonly string[], k: number): number {
  const rel = new Set(relevant);
  const dcg = ranked.slice(0, k).reduce((sum, key, i) => sum + (rel.has(key) ? 1 / Math.log2(i + 2) : 0), 0);
  const ideal = Array.from({ length: Math.min(k, rel.size) }, (_, i) => 1 / Math.log2(i + 2)).reduce((a, b) => a + b, 0);
  return ideal ? dcg / ideal : 0;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

function summarize(rows: { ranked: string[]; relevant: string[] }[]): Metrics {
  return {
    n: rows.length,
    recall5: mean(rows.map((r) => recallAt(r.ranked, r.relevant, 5))),
    recall10: mean(rows.map((r) => recallAt(r.ranked, r.relevant, 10))),
    ndcg5: mean(rows.map((r) => ndcgAt(r.ranked, r.relevant, 5))),
  };
}

export async function evaluate(dataset: Dataset, retrieve: Retriever): Promise<Report> {
  const rows: { kind: string; conversation: string; q: string; ranked: string[]; relevant: string[] }[] = [];
  for (const c of dataset.conversations) {
    for (const question of c.questions)
      rows.push({ kind: question.kind, conversation: c.id, q: question.q, ranked: await retrieve(c, question.q, 10), relevant: question.relevant });
  }
  const kinds = [...new Set(rows.map((r) => r.kind))].sort();
  return {
    overall: summarize(rows),
    byKind: Object.fromEntries(kinds.map((k) => [k, summarize(rows.filter((r) => r.kind === k))])),
    misses: rows.filter((r) => recallAt(r.ranked, r.relevant, 10) < 1).map((r) => ({ conversation: r.conversation, q: r.q, got: r.ranked.slice(0, 3) })),
  };
}

const pct = (x: number) => x.toFixed(3);

/** One markdown table: a row per retriever and question kind. */
export function markdownTable(reports: Record<string, Report>): string {
  const lines = ["| retriever | questions | n | recall@5 | recall@10 | NDCG@5 |", "|---|---|---|---|---|---|"];
  for (const [name, r] of Object.entries(reports)) {
    for (const [kind, m] of [["all", r.overall] as const, ...Object.entries(r.byKind)]) {
      lines.push(`| ${name} | ${kind} | ${m.n} | ${pct(m.recall5)} | ${pct(m.recall10)} | ${pct(m.ndcg5)} |`);
    }
  }
  return lines.join("\n");
}

/**
 * Deterministic noise facts drawn from the conversation's own vocabulary, so they compete for the same
 * words as the real answers (a harder setting than a clean store).
 */
export function distractors(c: Conversation, n: number, seed = 1): string[] {
  const vocab = [...new Set(c.facts.flatMap((f) => f.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []))].sort();
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 6 + Math.floor(next() * 6) }, () => vocab[Math.floor(next() * vocab.length)] ?? "");
    return `Note ${i}: ${words.join(" ")}`;
  });
}
