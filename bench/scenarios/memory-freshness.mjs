// Observation -> visible in working memory: POST /v1/observations, the queue delivers it (local queues:
// max_batch_timeout 1 s), the consumer consolidates with the (zero-latency) fake model and commits;
// the client polls GET /v1/memory/working every 20 ms until the new narrative is there.
const now = () => performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export default {
  name: "Memory: observation to working memory (queue + consolidation)",
  target: "observation visible in working memory <= 3 s (p95)",
  targets: { visible_ms: { p95: 3000 } },
  description:
    "`visible_ms`: from sending the observation to the first GET /v1/memory/working that shows the consolidated narrative. Includes the local queue's batching wait (max_batch_timeout = 1 s) and the 20 ms polling granularity.",
  runs: 20,
  warmup: 2,
  async setup(h) {
    return { user: await h.createUser() };
  },
  async sample(h, state, i) {
    const marker = `Narrative ${i} ${Date.now()}`;
    // Consolidation asks for structured output (a JSON document as the reply's text), not a forced tool call.
    const consolidated = { updated_scaffold: { Run: i }, updated_working_memory: marker, facts_to_embed: [`Bench fact ${i}`] };
    await h.script(state.user.id, [{ structured: true, reply: { content: [{ type: "text", text: JSON.stringify(consolidated) }] } }]);
    const t0 = now();
    const res = await h.api(state.user.key, "POST", "/v1/observations", { observations: [{ type: "learned_fact", content: `bench observation ${i}` }] });
    if (res.status !== 202) throw new Error(`observation: ${res.status} ${await res.text()}`);
    for (;;) {
      const body = await (await h.api(state.user.key, "GET", "/v1/memory/working")).json();
      if (body.working_memory === marker) return { visible_ms: now() - t0 };
      if (now() - t0 > 30_000) throw new Error("not consolidated within 30 s");
      await sleep(20);
    }
  },
};
