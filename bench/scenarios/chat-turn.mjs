// The Worker's own overhead per chat turn against a model that answers instantly, beside the floor of
// an authenticated read measured in the same run, and the D1 round trips the turn waited for before its
// model call. It runs its own local Worker (h.startWorker) of bench/worker.ts: the production Worker with a D1 binding
// that counts calls (test/d1-meter.ts), read back from GET /__meter after each turn.
import os from "node:os";

const now = () => performance.now();

const call = (url, key, method, p, body) =>
  fetch(`${url}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

// The user's long-term facts: a few hundred, two of which the turn's message is about, so fact retrieval
// finds and injects something every turn (its reads are part of what is measured).
const TOPICS = ["cycling", "chess", "sourdough", "jazz", "hiking", "pottery", "sailing", "climbing", "birdwatching", "knitting"];
const PLACES = ["Lisbon", "Porto", "Berlin", "Lyon", "Turin", "Ghent", "Bergen", "Krakow"];
const FACTS = [
  "User grows tomatoes and basil on the balcony of their flat",
  "User's balcony gets afternoon sun, so the tomatoes ripen in August",
  ...Array.from({ length: 298 }, (_, i) => `User went ${TOPICS[i % TOPICS.length]} with a friend in ${PLACES[i % PLACES.length]} (note ${i})`),
];
const MESSAGE = "what do I grow on my balcony?";

async function turn(url, key, sessionId) {
  const t0 = now();
  const res = await call(url, key, "POST", "/v1/chat", { message: MESSAGE, ...(sessionId ? { session_id: sessionId } : {}) });
  const reader = res.body.getReader();
  let first = 0;
  let doneAt = 0;
  let text = "";
  let chunks = 0;
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks += 1;
    if (!first) first = now();
    text += decoder.decode(value, { stream: true });
    if (!doneAt && text.includes("event: done")) doneAt = now();
  }
  if (!text.includes("event: done")) throw new Error(`turn did not finish: ${text.slice(-300)}`);
  return { ttfb: first - t0, done: doneAt - t0, total: now() - t0, chunks, sessionId: /"id":"(ses_[^"]+)"/.exec(text)?.[1] };
}

export default {
  name: "Chat turn overhead (zero-latency model)",
  target: "Worker overhead per turn p50 <= 10 ms above the authenticated-read floor of the same run; <= 2 sequential D1 round trips before the model call",
  targets: { above_floor_ms: { p50: 10 }, d1_sequential_before_model: { p50: 2, max: 2 } },
  description: [
    `Each sample is one streamed turn (\`${MESSAGE}\`, by a user with ${FACTS.length} stored facts, two of them about it: fact retrieval injects them every turn) in an existing session (history grows to 420 messages; older turns fold into the session summary past the 16k-token history budget), then one authenticated read, in the same \`wrangler dev\` instance.`,
    "`ttfb_ms`: request sent to first SSE byte. `done_ms`: request to the `done` event (the reply and its usage are with the client). `turn_ms`: request to end of stream, after the turn's bookkeeping batch (usage row, audit row, session counters), so a read that follows sees them. `fake_model_ms`: the fake model's own HTTP round trip, measured separately.",
    "`overhead_ms` = turn_ms - fake_model_ms. `authed_read_ms`: GET /v1/sessions?limit=1 (key lookup + one query), the floor. `above_floor_ms` = overhead_ms - authed_read_ms of the same sample.",
    "`d1_sequential_before_model`: D1 round trips the turn waited for one after another before its first model call (a call started after another finished counts one further); `d1_calls_before_model`: all of them, concurrent ones included.",
    "The fake answers the background model's summary calls with a summary, as a model would (unscripted, it sends an empty one, which the session rejects and retries every turn). `wrangler dev` runs with its local observability off (scripts/local-worker.mjs): its trace collector is not part of the Worker.",
    "`sse_chunks`: how many reads the client's stream took (each is one write through every hop between the session object and the client; events the client has not taken yet leave together).",
  ].join(" "),
  runs: 200,
  warmup: 20,
  async setup(h) {
    const engram = await h.startWorker({ entry: "bench/worker.ts" });
    const res = await call(engram.origin, h.adminToken, "POST", "/v1/admin/users", { name: "bench", plan: "pro" });
    const admin = await res.json();
    const key = admin.api_key.key;
    // The background model's answers when older turns fold into the session summary. Unscripted, the fake
    // answers a structured call with the smallest value its schema allows (an empty summary), which the
    // session rejects: no fold ever landed, and every turn past the budget retried it (one more model call
    // per turn, and a history that grew without bound). A real model writes a summary: so does this one.
    const summaries = Array.from({ length: 400 }, () => ({
      structured: true,
      reply: { json: { summary: "The user asked again and again what they grow on their balcony: tomatoes and basil.", observations: [] } },
    }));
    await fetch(`${h.fakeUrl}/__script`, { method: "POST", body: JSON.stringify({ key: admin.user.id, steps: summaries }) });
    const imported = await call(engram.origin, key, "POST", "/v1/memory/facts", { facts: FACTS.map((text) => ({ text })) });
    if (imported.status !== 201) throw new Error(`importing facts: ${imported.status} ${await imported.text()}`);
    const first = await turn(engram.origin, key);
    const logs = await (await call(engram.origin, key, "GET", "/v1/memory/context-logs?limit=1")).json();
    const sections = logs.context_logs?.[0]?.injected?.sections ?? [];
    if (!sections.some((x) => x.name === "retrieved_facts")) throw new Error(`the turn injected no retrieved facts: ${JSON.stringify(sections)}`);
    return { engram, key, userId: admin.user.id, sessionId: first.sessionId };
  },
  async sample(h, state) {
    const url = state.engram.origin;
    const t = await turn(url, state.key, state.sessionId);
    const d1 = await (await fetch(`${url}/__meter`)).json();
    if (!d1) throw new Error("the turn made no model call");
    const t0 = now();
    await (await call(url, state.key, "GET", "/v1/sessions?limit=1")).text();
    const floor = now() - t0;
    const model = await h.fakeRoundTrip();
    const overhead = t.total - model;
    return {
      ttfb_ms: t.ttfb,
      done_ms: t.done,
      turn_ms: t.total,
      fake_model_ms: model,
      overhead_ms: overhead,
      authed_read_ms: floor,
      above_floor_ms: overhead - floor,
      d1_sequential_before_model: d1.sequential,
      d1_calls_before_model: d1.calls,
      sse_chunks: t.chunks,
    };
  },
  async report(h, state) {
    await state.engram.stop();
    // fake_model_ms times a one-line request; a turn's own request carries the prompt and the history
    // (tens of KB the fake parses and hashes). Replaying the run's last turns' requests shows that share.
    const sent = await (await fetch(`${h.fakeUrl}/__requests?key=${encodeURIComponent(state.userId)}`)).json();
    const replay = [];
    for (const body of sent.slice(-50)) {
      const t0 = now();
      const res = await fetch(`${h.fakeUrl}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": "k", "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      await res.text();
      replay.push(now() - t0);
    }
    replay.sort((a, b) => a - b);
    const bytes = sent
      .slice(-50)
      .map((b) => JSON.stringify(b).length)
      .sort((a, b) => a - b);
    const fakeLine = `The fake's round trip for the run's last ${replay.length} turn requests themselves (replayed from the bench process after the run; ${bytes[bytes.length >> 1]} bytes at the median): p50 ${replay[replay.length >> 1].toFixed(2)} ms, p95 ${replay[Math.floor(replay.length * 0.95)].toFixed(2)} ms; \`fake_model_ms\` (what is subtracted) times a one-line request.`;
    // Every figure here scales with how busy the machine was: say so beside them.
    const [one, five] = os.loadavg();
    return `${fakeLine}\n\nLoad average at the end of the run: ${one.toFixed(2)} (1 min), ${five.toFixed(2)} (5 min) on ${os.cpus().length} cores.`;
  },
};
