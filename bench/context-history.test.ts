// Not a unit test (run by `npm run bench`): a 200-turn session of 3,000-character messages through the
// real session Durable Object against the fake Messages API, counting the history tokens each chat call
// sends (the request's messages, 4 characters a token) with the history budget, against what the full
// history would have been.
import { it } from "vitest";
import { approxTokens } from "../src/lib/text";
import { api, chat, createUser, script, seen } from "../test/helpers";
import { report } from "./report";

const TURNS = 200;
const GROUP = {
  group: "Context: history tokens sent per chat call over a 200-turn session",
  target: "bounded by HISTORY_BUDGET_TOKENS (16,000) plus the summary and the current turn, instead of growing with the session",
  description:
    "200 turns, each a 3,000-character user message and a 600-character reply; older turns folded into a running summary (about 1,500 characters) by the background model.",
};

it("sends a bounded history", async () => {
  const u = await createUser("pro");
  const summary = { summary: "Earlier the user and the assistant discussed the bakery's orders in detail. ".repeat(20), observations: [] };
  await script(
    u.id,
    ...Array.from({ length: 80 }, () => ({ structured: true, reply: { content: [{ type: "text" as const, text: JSON.stringify(summary) }] } })),
  );
  let sessionId: string | undefined;
  const full: number[] = [];
  let history = "";
  for (let i = 0; i < TURNS; i++) {
    const message = `Turn ${i}: ${"The order book for the bakery needs another look today. ".repeat(54)}`.slice(0, 3000);
    const reply = `Reply ${i}: ${"Here is what I found in the order book. ".repeat(16)}`.slice(0, 600);
    // Small reported usage: the daily chat budget is not what this measures.
    await script(u.id, { reply: { content: [{ type: "text", text: reply }], usage: { input_tokens: 1, output_tokens: 1 } } });
    const turn = await chat(u.key, { message, ...(sessionId ? { session_id: sessionId } : {}) });
    sessionId = turn.sessionId;
    history += JSON.stringify([{ role: "user", content: [{ type: "text", text: message }] }]);
    full.push(approxTokens(history));
    history += JSON.stringify([{ role: "assistant", content: [{ type: "text", text: reply }] }]);
  }
  // The session read waits for a summary still being made after the last turn, so every call is counted.
  await api(u.key, "GET", `/v1/sessions/${sessionId}`);
  const sent = (await seen(u.id)).filter((r) => !("output_config" in r)).map((r) => approxTokens(JSON.stringify(r.messages)));
  report(GROUP, "history_tokens_per_call_with_budget", sent);
  report(GROUP, "history_tokens_per_call_full_history", full);
  report(GROUP, "summary_calls_per_200_turns", [(await seen(u.id)).filter((r) => "output_config" in r).length]);
}, 900_000);
