// Share of input tokens served by the prompt cache over a 30-turn session with full brain documents
// (SOUL, a site's BIBLE, MEMORY entries), on the default chat model, against the fake Messages API,
// which does the cache accounting the documentation describes (breakpoints, prefix equality, 20-block
// lookback, per-model minimum). Each sample is one whole session.
const TURNS = 30;
const para = (topic, n) =>
  Array.from({ length: n }, (_, i) => `${topic} note ${i + 1}: a durable fact the assistant should keep in mind when helping.`).join("\n");

async function turn(h, key, body) {
  const res = await h.api(key, "POST", "/v1/chat", body);
  const text = await res.text();
  const done = text.split("\n\n").find((f) => f.startsWith("event: done"));
  if (!done) throw new Error(`turn did not finish: ${text.slice(-300)}`);
  const data = JSON.parse(done.slice(done.indexOf("data: ") + 6));
  return { usage: data.usage, sessionId: /"id":"(ses_[^"]+)"/.exec(text)?.[1] };
}

export default {
  name: "Prompt cache share over a 30-turn session (full brain documents)",
  target: "cache_read_input_tokens / all input tokens >= 70% over the session",
  description:
    "Each sample is one 30-turn session of one pro user with SOUL (~4,000 chars), the active site's BIBLE (~4,000 chars) and 40 MEMORY entries. `cache_read_share_pct`: cache_read_input_tokens / (input_tokens + cache_creation_input_tokens + cache_read_input_tokens), summed over the session's `done.usage`. `input_tokens_per_turn`: all input tokens per turn. Token counts are the fake's (4 characters a token).",
  runs: 3,
  warmup: 0,
  async setup(h) {
    const user = await h.createUser("pro");
    await h.api(user.key, "PUT", "/v1/brain/soul", { content: para("SOUL", 45).slice(0, 4000) });
    await h.api(user.key, "PUT", "/v1/sites/bakery/sync", { name: "Bakery", status: "ok" });
    await h.api(user.key, "PUT", "/v1/sites/bakery/bible", { content: para("BIBLE", 45).slice(0, 4000) });
    for (let i = 0; i < 40; i++)
      await h.api(user.key, "POST", "/v1/brain/memory", { content: `Memory ${i}: the user mentioned preference number ${i} about the bakery.` });
    return { user };
  },
  async sample(h, state) {
    let sessionId;
    const sum = { input: 0, read: 0, write: 0 };
    for (let i = 0; i < TURNS; i++) {
      const t = await turn(h, state.user.key, {
        message: `Question ${i + 1} about the bakery's sourdough schedule and prices this week?`,
        site_id: "bakery",
        ...(sessionId ? { session_id: sessionId } : {}),
      });
      sessionId = t.sessionId;
      sum.input += t.usage.input_tokens;
      sum.read += t.usage.cache_read_input_tokens ?? 0;
      sum.write += t.usage.cache_creation_input_tokens ?? 0;
    }
    const all = sum.input + sum.read + sum.write;
    return { cache_read_share_pct: (100 * sum.read) / all, input_tokens_per_turn: all / TURNS };
  },
};
