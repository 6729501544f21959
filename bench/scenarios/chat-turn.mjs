// The Worker's own overhead per chat turn: time to the first SSE byte and to the end of the turn,
// against a model that answers instantly. The fake's own round trip is measured too and subtracted.
const now = () => performance.now();

async function turn(h, key, sessionId) {
  const t0 = now();
  const res = await h.api(key, "POST", "/v1/chat", { message: "hello there", ...(sessionId ? { session_id: sessionId } : {}) });
  const reader = res.body.getReader();
  let first = 0;
  let text = "";
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!first) first = now();
    text += decoder.decode(value, { stream: true });
  }
  if (!text.includes("event: done")) throw new Error(`turn did not finish: ${text.slice(-300)}`);
  return { ttfb: first - t0, total: now() - t0, sessionId: /"id":"(ses_[^"]+)"/.exec(text)?.[1] };
}

export default {
  name: "Chat turn overhead (zero-latency model)",
  target: "Worker overhead per turn p50 <= 10 ms, p95 <= 25 ms",
  targets: { overhead_ms: { p50: 10, p95: 25 } },
  description:
    "Each sample is one streamed turn in an existing session (history grows to 400 messages). `ttfb_ms`: request sent to first SSE byte. `turn_ms`: request to end of stream. `fake_model_ms`: the fake model's own HTTP round trip, measured separately. `overhead_ms` = turn_ms - fake_model_ms: the Worker, Durable Object, D1 and SDK cost of a turn.",
  runs: 200,
  warmup: 20,
  async setup(h) {
    const user = await h.createUser();
    const first = await turn(h, user.key);
    return { user, sessionId: first.sessionId };
  },
  async sample(h, state) {
    const t = await turn(h, state.user.key, state.sessionId);
    const model = await h.fakeRoundTrip();
    return { ttfb_ms: t.ttfb, turn_ms: t.total, fake_model_ms: model, overhead_ms: t.total - model };
  },
};
