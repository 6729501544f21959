// The tool bridge's own cost: a turn that suspends on a client tool, then the resume that finishes it,
// against a model that answers instantly, compared with a plain turn in the same session.
const now = () => performance.now();

const tool = { name: "lookup_order", description: "Look up an order", input_schema: { type: "object", properties: { id: { type: "string" } } } };

async function readAll(res) {
  const text = await res.text();
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

async function timed(h, key, path, body, expect) {
  const t0 = now();
  const text = await readAll(await h.api(key, "POST", path, body));
  if (!text.includes(expect)) throw new Error(`expected ${expect}: ${text.slice(-300)}`);
  return { ms: now() - t0, text };
}

const text = (t) => ({ reply: { content: [{ type: "text", text: t }] } });

export default {
  name: "Tool bridge: suspend + resume overhead (zero-latency model)",
  target: "suspend + resume overhead, excluding the model, p50 <= 10 ms",
  targets: { bridge_overhead_ms: { p50: 10 } },
  description:
    "Each sample: `suspend_turn_ms`, a streamed chat turn whose model reply calls a client tool (ends with tool_pending); `resume_ms`, POST tool_result whose model reply is text (ends with done); `plain_turn_ms`, a streamed chat turn with a text reply in the same session; `fake_model_ms`, the fake's own round trip. `resume_overhead_ms` = resume_ms - fake_model_ms (the whole resume request but the model). `bridge_overhead_ms` = suspend_turn_ms + resume_ms - plain_turn_ms - fake_model_ms: what a suspended-and-resumed turn costs beyond the same turn without a client tool, both model calls excluded. Sessions are renewed every 25 samples (history <= 150 messages).",
  runs: 200,
  warmup: 20,
  async setup(h) {
    return { user: await h.createUser(), sessionId: undefined, n: 0 };
  },
  async sample(h, state, i) {
    const { user } = state;
    if (state.n++ % 25 === 0) {
      await h.script(user.id, [text("hello")]);
      const first = await timed(h, user.key, "/v1/chat", { message: "hello" }, "event: done");
      state.sessionId = /"id":"(ses_[^"]+)"/.exec(first.text)?.[1];
    }
    const callId = `toolu_bench_${state.n}_${i}`;
    await h.script(user.id, [
      { reply: { content: [{ type: "tool_use", id: callId, name: "lookup_order", input: { id: String(i) } }] } },
      text("Order found."),
      text("plain"),
    ]);
    const suspend = await timed(
      h,
      user.key,
      "/v1/chat",
      { message: "where is my order?", session_id: state.sessionId, client_tools: [tool] },
      "event: tool_pending",
    );
    const resume = await timed(h, user.key, `/v1/sessions/${state.sessionId}/tool_result`, { call_id: callId, content: "shipped" }, "event: done");
    const plain = await timed(h, user.key, "/v1/chat", { message: "thanks", session_id: state.sessionId }, "event: done");
    const model = await h.fakeRoundTrip();
    return {
      suspend_turn_ms: suspend.ms,
      resume_ms: resume.ms,
      plain_turn_ms: plain.ms,
      fake_model_ms: model,
      resume_overhead_ms: resume.ms - model,
      bridge_overhead_ms: suspend.ms + resume.ms - plain.ms - model,
    };
  },
};
