// Hybrid retrieval over HTTP for a user with 10,000 facts among 100,000 (10 users), seeded through
// POST /v1/memory/facts. The corpus is deliberately repetitive (a small vocabulary), so every query term
// matches thousands of facts: a worst case for both the full-text and the vector half.
import { DENSE_QUERIES, denseFact, rng } from "../memory-corpus.mjs";

const now = () => performance.now();

export default {
  name: "Memory: hybrid retrieval, 10,000 facts for the user (100,000 across users)",
  target: "retrieval p95 <= 30 ms locally",
  targets: { search_ms: { p95: 30 }, fulltext_ms: { p95: 30 }, vector_ms: { p95: 30 } },
  description:
    "`search_ms`: GET /v1/memory/facts/search?q=...&k=5 (hybrid) round trip. `fulltext_ms`, `vector_ms`: the same with mode=fulltext / mode=vector. `floor_ms`: an authenticated one-query read (GET /v1/sessions?limit=1) measured alongside, for the HTTP + auth share.",
  runs: 300,
  warmup: 20,
  async setup(h) {
    const users = [];
    for (let u = 0; u < 10; u++) {
      const user = await h.createUser();
      users.push(user);
      const r = rng(u + 1);
      for (let i = 0; i < 10_000; i += 1000) {
        const facts = Array.from({ length: 1000 }, (_, j) => ({ text: denseFact(r, i + j) }));
        // `wrangler dev` reloads the Worker when a source file changes; an import cut short that way is
        // safe to send again (fact ids are deterministic).
        for (let attempt = 1; ; attempt++) {
          const res = await h.api(user.key, "POST", "/v1/memory/facts", { facts });
          if (res.status === 201) break;
          if (res.status !== 503 || attempt === 3) throw new Error(`seed: ${res.status} ${await res.text()}`);
        }
      }
    }
    return { user: users[3] };
  },
  async sample(h, state, i) {
    const q = encodeURIComponent(DENSE_QUERIES[i % DENSE_QUERIES.length]);
    const time = async (path) => {
      const t0 = now();
      const res = await h.api(state.user.key, "GET", path);
      await res.text();
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      return now() - t0;
    };
    return {
      search_ms: await time(`/v1/memory/facts/search?q=${q}&k=5`),
      fulltext_ms: await time(`/v1/memory/facts/search?q=${q}&k=5&mode=fulltext`),
      vector_ms: await time(`/v1/memory/facts/search?q=${q}&k=5&mode=vector`),
      floor_ms: await time("/v1/sessions?limit=1"),
    };
  },
};
