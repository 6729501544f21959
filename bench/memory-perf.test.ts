/**
 * Memory micro-benchmarks inside workerd with local D1 (the same stack as the tests), reported, never asserted
 * (run by `npm run bench`):
 * - injection: working memory + scaffold providers (one D1 read) for a user with a full tier
 * - retrieval: hybrid / full-text / vector search for a user with 10,000 facts among 100,000, for two
 *   corpora: a dense, repetitive vocabulary (every query term matches thousands of facts: a worst case) and a
 *   Zipf-distributed vocabulary of 5,000 words, its head included (the search keeps no stop list: a word common in
 *   the user's facts is dropped by measuring it, which costs reads). Both live in the same database (200,000 facts).
 * Timers in workerd advance on I/O, so each figure spans the D1 round trips plus the CPU between them.
 */

import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { buildSystemPrompt } from "../src/chat/prompt";
import { loadConfig } from "../src/config/config";
import { createDb } from "../src/db/client";
import { importFacts } from "../src/memory/facts";
import { retrievedFactsProvider, scaffoldProvider, workingMemoryProvider } from "../src/memory/providers";
import { type SearchMode, searchFacts } from "../src/memory/retrieval";
import { createUser } from "../test/helpers";
import { captured } from "../test/memory-helpers";
import { weightedDraw } from "./draw";
import { DENSE_QUERIES, denseFact, pick, rng } from "./memory-corpus.mjs";
import { report } from "./report";

const USERS = 10;
const FACTS_PER_USER = 10_000;
const RUNS = 300;

const INJECTION = {
  group: "Memory: injecting working memory + scaffold",
  target: "p50 <= 5 ms (the product budget is 50 ms)",
  targets: { inject_ms: { p50: 5 } },
  description:
    "buildSystemPrompt with the working-memory and scaffold providers for a user with a 500-word working memory and a 30-key scaffold (one D1 read).",
};
const HOW =
  "k=5, `searchFacts` directly (no HTTP). Hybrid = the full-text list (FTS5 bm25, the user's common words measured and left out) + the local vector index, fused by score; `fulltext` / `vector`: one half alone. `provider_search_and_recall_update`: the chat turn's retrieved-facts provider, i.e. the search plus counting the recall (a turn defers that write until after the model call). Inside workerd the clock advances only at I/O: these figures are D1's time, not the ranking's CPU.";
const RETRIEVAL = (corpus: string) => ({
  group: `Memory: retrieval among 10,000 facts for the user, 100,000 across users (${corpus} corpus)`,
  target: "p95 <= 30 ms locally (the product budget is 300 ms)",
  targets: { "*": { p95: 30 } },
  description:
    corpus === "dense"
      ? `Dense, repetitive vocabulary: every query term matches thousands of the user's facts (a worst case). ${HOW}`
      : `Zipf-distributed vocabulary of 5,000 words, the most frequent ones included (like natural text, function words and all). ${HOW}`,
});

const QUERIES = [...DENSE_QUERIES];
const fact = denseFact;

/**
 * Pseudo-words drawn with P(rank r) proportional to 1 / r^1.07: Zipf like natural text, its head of function
 * words (the, of, and...) included, since the search has no stop list and must measure them.
 */
function zipfVocabulary(size: number) {
  const syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "de", "po", "an", "el", "or", "us", "im"];
  const r0 = rng(7);
  const words = Array.from({ length: size }, () => Array.from({ length: 2 + Math.floor(r0() * 3) }, () => pick(r0, syllables)).join(""));
  return {
    draw: weightedDraw(
      words,
      words.map((_, i) => 1 / (i + 1) ** 1.07),
      "",
    ),
  };
}

async function measureRetrieval(name: string, makeFact: (r: () => number, i: number) => string, queries: () => string[]) {
  const { deps } = await captured(null);
  const users: string[] = [];
  const t0 = performance.now();
  for (let u = 0; u < USERS; u++) {
    const user = await createUser("free", 0);
    users.push(user.id);
    const r = rng(u + 1);
    for (let i = 0; i < FACTS_PER_USER; i += 1000) {
      await importFacts(
        deps,
        user.id,
        Array.from({ length: 1000 }, (_, j) => ({ text: makeFact(r, i + j) })),
      );
    }
  }
  console.log(`[${name}] seeded ${USERS * FACTS_PER_USER} facts for ${USERS} users in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const target = users[3] ?? "";
  const qs = queries();
  for (const mode of ["hybrid", "fulltext", "vector"] satisfies SearchMode[]) {
    const times: number[] = [];
    for (let i = 0; i < RUNS + 20; i++) {
      const t = performance.now();
      await searchFacts(deps, { userId: target, query: qs[i % qs.length] ?? "", k: 5, connectionIds: [], mode });
      if (i >= 20) times.push(performance.now() - t);
    }
    report(RETRIEVAL(name), `${mode}_ms`, times);
  }
  const scope = { db: deps.db, env, config: loadConfig(env), userId: target, plan: "free" as const, sessionId: "ses_bench", siteId: null, projectId: null };
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await buildSystemPrompt({ ...scope, query: qs[i % qs.length] ?? "", now: Date.now() }, [retrievedFactsProvider]);
    times.push(performance.now() - t);
  }
  report(RETRIEVAL(name), "provider_search_and_recall_update_ms", times);
}

describe("memory performance (figures, not assertions)", () => {
  it("injects working memory + scaffold", async () => {
    const u = await createUser("free", 0);
    const scaffold = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`Key${i}`, { detail: `value ${i} `.repeat(8) }]));
    await env.DB.prepare("UPDATE users SET working_memory = ?, scaffold = ? WHERE id = ?")
      .bind("word ".repeat(500).trim(), JSON.stringify(scaffold), u.id)
      .run();
    const scope = {
      db: createDb(env.DB),
      env,
      config: loadConfig(env),
      userId: u.id,
      plan: "free" as const,
      sessionId: "ses_bench",
      siteId: null,
      projectId: null,
    };
    const times: number[] = [];
    for (let i = 0; i < RUNS + 20; i++) {
      const t0 = performance.now();
      await buildSystemPrompt({ ...scope, query: "hello", now: Date.now() }, [workingMemoryProvider, scaffoldProvider]);
      if (i >= 20) times.push(performance.now() - t0);
    }
    report(INJECTION, "inject_ms", times);
  });

  it("retrieves among 10,000 facts for the user, 100,000 across users: dense vocabulary (worst case)", async () => {
    await measureRetrieval(
      "dense",
      (r, i) => fact(r, i),
      () => QUERIES,
    );
  });

  it("retrieves among 10,000 facts for the user, 100,000 across users: Zipf vocabulary of 5,000 words", async () => {
    const vocab = zipfVocabulary(5000);
    const queries = Array.from({ length: 50 }, (_, i) => {
      const r = rng(1000 + i);
      return Array.from({ length: 3 + Math.floor(r() * 4) }, () => vocab.draw(r)).join(" ");
    });
    await measureRetrieval(
      "zipf",
      (r, i) => `${Array.from({ length: 8 + Math.floor(r() * 7) }, () => vocab.draw(r)).join(" ")} ${i}`,
      () => queries,
    );
  });
});
