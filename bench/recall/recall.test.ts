/**
 * `npm run eval:recall`: imports the generated conversations (corpus.ts) through the public HTTP API, one
 * request per session with each turn's date in its metadata, asks every question through
 * `GET /v1/memory/facts/search?k=25` in hybrid, full-text and vector modes, and compares with a plain BM25
 * (MiniSearch, default options) run here over the same texts. Figures, not assertions.
 * Results are matched by text: engram stores a text stated twice as one fact, so BM25's list is deduplicated the same way.
 */
import MiniSearch from "minisearch";
import { describe, it } from "vitest";
import { api, createUser } from "../../test/helpers";
import { report } from "../report";
import { BLIND_SEED, type Corpus, FRESH_SEED, generateCorpus, HELD_OUT_SEED, type Question, type QuestionType } from "./corpus";
import { auc, currentFirst, ndcgAt, recallAt } from "./metrics";
import { FRESH, HELD_OUT } from "./phrases";
import { BLIND } from "./phrases-blind";
import { BLIND2, BLIND2_SEED } from "./phrases-blind2";
import { BLIND3, BLIND3_SEED } from "./phrases-blind3";

const K = 25;
const MODES = ["hybrid", "fulltext", "vector"] as const;
const SYSTEMS = [...MODES, "bm25"] as const;
type System = (typeof SYSTEMS)[number];
type Ranked = { keys: string[]; signal: number; hits?: SearchBody["results"] };

const key = (text: string) => text.replace(/\s+/g, " ").trim().toLowerCase();

type SearchBody = { results: { id: string; text: string; score: number; match?: number; superseded_by?: string | null }[]; degraded?: string };

async function search(apiKey: string, q: string, mode: (typeof MODES)[number]): Promise<Ranked & { ms: number }> {
  const t0 = performance.now();
  const res = await api(apiKey, "GET", `/v1/memory/facts/search?${new URLSearchParams({ q, k: String(K), mode })}`);
  if (res.status !== 200) throw new Error(`search: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as SearchBody;
  // The abstention signal is what the API's `weak` flag reads: the best `match` among the results.
  const signal = Math.max(0, ...body.results.map((r) => r.match ?? r.score));
  return { keys: body.results.map((r) => key(r.text)), signal, hits: body.results, ms: performance.now() - t0 };
}

function bm25(turns: { id: string; text: string }[]) {
  const index = new MiniSearch<{ id: string; text: string }>({ fields: ["text"] });
  index.addAll(turns);
  const text = new Map(turns.map((t) => [t.id, key(t.text)]));
  return (q: string): Ranked => {
    const hits = index.search(q);
    const keys = [...new Set(hits.map((h) => text.get(String(h.id)) ?? ""))].slice(0, K);
    return { keys, signal: hits[0]?.score ?? 0 };
  };
}

const fmt = (x: number) => (Number.isFinite(x) ? (100 * x).toFixed(1) : "  n/a");
const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : "n/a");

async function evaluate(label: string, corpus: Corpus) {
  const ranked = new Map<System, Map<Question, Ranked>>(SYSTEMS.map((s) => [s, new Map()]));
  const importMs: number[] = [];
  const searchMs: number[] = [];
  let shortLists = 0;
  let notSearchable = 0;
  for (const [u, user] of corpus.users.entries()) {
    const { key: apiKey } = await createUser("pro");
    const sessions = [...new Set(user.turns.map((t) => t.session))];
    for (const s of sessions) {
      const turns = user.turns.filter((t) => t.session === s);
      const facts = turns.map((t) => ({ text: t.text, metadata: { date: t.date, session_id: `s${s}`, role: t.role, turn: t.id } }));
      const t0 = performance.now();
      const res = await api(apiKey, "POST", "/v1/memory/facts", { facts });
      if (res.status !== 201) throw new Error(`import: ${res.status} ${await res.text()}`);
      importMs.push(performance.now() - t0);
      // Read-your-writes: the session's last user turn must be findable right after the import returns.
      const last = turns.filter((t) => t.role === "user").at(-1);
      if (last) {
        const found = await search(apiKey, last.text, "fulltext");
        if (!found.keys.includes(key(last.text))) notSearchable++;
      }
    }
    const baseline = bm25(user.turns);
    for (const q of corpus.questions.filter((x) => x.user === u)) {
      ranked.get("bm25")?.set(q, baseline(q.q));
      for (const mode of MODES) {
        const r = await search(apiKey, q.q, mode);
        searchMs.push(r.ms);
        if (r.keys.length < K && q.type !== "abstention") shortLists++;
        ranked.get(mode)?.set(q, r);
      }
    }
  }

  const textOf = new Map(corpus.users.flatMap((u) => u.turns.map((t) => [t.id, key(t.text)] as const)));
  const ev = (q: Question) => q.evidence.map((id) => textOf.get(id) ?? "");
  const types: (QuestionType | "overall")[] = ["single-hop", "multi-hop", "temporal", "knowledge-update", "overall"];
  // History questions ("what did I drive before?") are reported on their own line, outside the overall figure.
  const of = (t: QuestionType | "overall") =>
    corpus.questions.filter((q) => q.type !== "abstention" && q.type !== "history" && (t === "overall" || q.type === t));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const metric = (s: System, t: QuestionType | "overall", f: (keys: string[], q: Question) => number) =>
    mean(of(t).map((q) => f(ranked.get(s)?.get(q)?.keys ?? [], q)));

  const lines: string[] = [];
  const n = (t: QuestionType | "overall") => of(t).length;
  lines.push(`corpus: ${corpus.users.length} users, ${corpus.users.map((u) => u.turns.length).join("/")} turns, ${corpus.questions.length} questions`);
  lines.push("| type | n | metric | hybrid | full-text | vector | BM25 | hybrid/BM25 | full-text/BM25 | vector/BM25 |");
  lines.push("|---|---|---|---|---|---|---|---|---|---|");
  for (const t of types) {
    for (const [name, f] of [
      ["R@5", (k: string[], q: Question) => recallAt(k, ev(q), 5)],
      ["R@10", (k: string[], q: Question) => recallAt(k, ev(q), 10)],
      ["R@25", (k: string[], q: Question) => recallAt(k, ev(q), 25)],
      ["NDCG@10", (k: string[], q: Question) => ndcgAt(k, ev(q), 10)],
    ] as const) {
      const v = SYSTEMS.map((s) => metric(s, t, f));
      const [h = 0, ft = 0, ve = 0, b = 0] = v;
      lines.push(`| ${t} | ${n(t)} | ${name} | ${fmt(h)} | ${fmt(ft)} | ${fmt(ve)} | ${fmt(b)} | ${ratio(h, b)} | ${ratio(ft, b)} | ${ratio(ve, b)} |`);
    }
  }
  const ku = corpus.questions.filter((q) => q.type === "knowledge-update");
  const kuAcc = (s: System) =>
    mean(
      ku.map((q) =>
        currentFirst(
          ranked.get(s)?.get(q)?.keys ?? [],
          ev(q)[0] ?? "",
          (q.stale ?? []).map((id) => textOf.get(id) ?? ""),
        )
          ? 1
          : 0,
      ),
    );
  lines.push(
    `| knowledge-update | ${ku.length} | current first | ${SYSTEMS.map((s) => fmt(kuAcc(s))).join(" | ")} | ${ratio(kuAcc("hybrid"), kuAcc("bm25"))} | ${ratio(kuAcc("fulltext"), kuAcc("bm25"))} | ${ratio(kuAcc("vector"), kuAcc("bm25"))} |`,
  );
  const history = corpus.questions.filter((q) => q.type === "history");
  if (history.length) {
    const hist = (s: System) => mean(history.map((q) => recallAt(ranked.get(s)?.get(q)?.keys ?? [], ev(q), 5)));
    lines.push(
      `| history | ${history.length} | previous in top 5 | ${SYSTEMS.map((s) => fmt(hist(s))).join(" | ")} | ${ratio(hist("hybrid"), hist("bm25"))} | ${ratio(hist("fulltext"), hist("bm25"))} | ${ratio(hist("vector"), hist("bm25"))} |`,
    );
  }
  const abst = (s: System) => {
    const signal = (q: Question) => ranked.get(s)?.get(q)?.signal ?? 0;
    return auc(corpus.questions.filter((q) => q.type !== "abstention").map(signal), corpus.questions.filter((q) => q.type === "abstention").map(signal));
  };
  lines.push(
    `| abstention | ${corpus.questions.filter((q) => q.type === "abstention").length} | AUC (best match) | ${SYSTEMS.map((s) => fmt(abst(s))).join(" | ")} | | | |`,
  );
  // Why knowledge-update questions miss: the hybrid list's head, and where the current and stale statements ranked.
  const misses: string[] = [];
  // Printed for the original, held-out, fresh and blind corpora. The held-out misses were first read after its figure
  // had been recorded; the fresh ones from the session that made fresh a development set, the blind ones from the
  // session that made blind one (docs/memory.md). Never for blind2 and blind3, the checks on fitting to the rest.
  const printed = label !== "blind2" && label !== "blind3";
  for (const q of printed ? ku : []) {
    const r = ranked.get("hybrid")?.get(q);
    const keys = r?.keys ?? [];
    const current = ev(q)[0] ?? "";
    const stale = (q.stale ?? []).map((id) => textOf.get(id) ?? "");
    if (currentFirst(keys, current, stale)) continue;
    const at = (k: string) => keys.indexOf(k) + 1 || "-";
    // Where the other lists put the current statement: found by BM25 or the vector half but not by hybrid is another cause than found by none.
    const elsewhere = (["bm25", "vector"] as const).map((s) => `${s} ${(ranked.get(s)?.get(q)?.keys ?? []).indexOf(current) + 1 || "-"}`).join(", ");
    misses.push(`- u${q.user} "${q.q}": current at ${at(current)} (${current}); stale at ${stale.map(at).join(", ")}; ${elsewhere}`);
    for (const [i, h] of (r?.hits ?? []).slice(0, 4).entries())
      misses.push(`    ${i + 1}. ${h.score.toFixed(3)} m=${(h.match ?? 0).toFixed(2)}${h.superseded_by ? " [history]" : ""} ${h.text.slice(0, 90)}`);
  }
  // History questions whose previous statement is not in the top 5.
  for (const q of printed ? history : []) {
    const keys = ranked.get("hybrid")?.get(q)?.keys ?? [];
    const previous = ev(q)[0] ?? "";
    if (recallAt(keys, [previous], 5) === 1) continue;
    misses.push(`- history u${q.user} "${q.q}": previous at ${keys.indexOf(previous) + 1 || "-"} (${previous})`);
  }
  // The abstention signal's overlap: the weakest answerable questions and the strongest unanswerable ones.
  if (label === "original") {
    const sig = (q: Question) => ranked.get("hybrid")?.get(q)?.signal ?? 0;
    const top = (q: Question) =>
      ranked
        .get("hybrid")
        ?.get(q)
        // A question can find nothing at all: then it has no top hit.
        ?.hits?.reduce<SearchBody["results"][number] | undefined>((a, b) => (!a || (b.match ?? 0) > (a.match ?? 0) ? b : a), undefined)
        ?.text.slice(0, 70) ?? "";
    const show = (qs: Question[]) => qs.map((q) => `    ${sig(q).toFixed(2)} ${q.type} "${q.q}" -> ${top(q)}`);
    const answerable = corpus.questions.filter((q) => q.type !== "abstention").sort((a, b) => sig(a) - sig(b));
    const none = corpus.questions.filter((q) => q.type === "abstention").sort((a, b) => sig(b) - sig(a));
    misses.push("abstention signal: weakest answerable", ...show(answerable.slice(0, 12)), "strongest unanswerable", ...show(none.slice(0, 12)));
  }
  lines.push(
    `searches returning fewer than ${K} results (answerable questions, all modes): ${shortLists}; session imports whose last user turn was not found right after: ${notSearchable}`,
  );
  console.log(
    `\nRECALL_EVAL ${label}\n${lines.join("\n")}\n\nknowledge-update misses (hybrid)${printed ? (misses.length ? "" : ": none") : ": not printed for this corpus"}\n${misses.join("\n")}\n`,
  );
  const group = { group: `Recall eval (${label}): HTTP latency`, target: "figures only", description: "Per request over SELF.fetch inside workerd" };
  report(group, "import_session_ms", importMs);
  report(group, "search_ms", searchMs);
}

describe("recall on long conversations (figures, not assertions)", () => {
  it("original corpus: imports every session over HTTP and compares hybrid / full-text / vector with BM25", () => evaluate("original", generateCorpus()));
  // Another seed and other words for the same facts and questions: the check on anything fitted to the original.
  it("held-out corpus: same, other seed and phrasing", () => evaluate("held-out", generateCorpus(HELD_OUT_SEED, 6, 24, HELD_OUT)));
  // Other seed, words and entities, and more kinds of changing fact: the check on fitting to both corpora above.
  it("fresh corpus: other seed, phrasing, entities and kinds of changing fact", () => evaluate("fresh", generateCorpus(FRESH_SEED, 6, 24, FRESH)));
  // Written without reading the ranking code and never tuned on: the check on fitting to all three above.
  it("blind corpus: its own seed, phrasing, chit-chat, entities and kinds of changing fact", () => evaluate("blind", generateCorpus(BLIND_SEED, 6, 24, BLIND)));
  it("blind2 corpus: a second blind check, all its own", () => evaluate("blind2", generateCorpus(BLIND2_SEED, 6, 24, BLIND2)));
  it("blind3 corpus: a third blind check, all its own", () => evaluate("blind3", generateCorpus(BLIND3_SEED, 6, 24, BLIND3)));
});
