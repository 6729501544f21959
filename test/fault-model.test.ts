/**
 * Model faults in the middle of a turn: HTTP 429 / 500 / 529 after the SDK's retries, an `error` event
 * mid-stream after a completed tool round, and a stream that stops sending. Each ends the turn with one
 * `error` event, leaves history as it was before the turn (never a tool_use without its result), records
 * the tokens of the calls that did complete, and leaves the session usable.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { Step } from "./fake-anthropic/worker";
import { count } from "./fault-helpers";
import { api, chat, createUser, history, saidIn, script, textReply, toolCall } from "./helpers";
import { rowOnShards } from "./shard-helpers";

type Usage = { input: number; output: number; rows: number };
const chatUsage = async (sessionId: string): Promise<Usage> => {
  const row = await rowOnShards<Usage>(
    "SELECT count(*) rows, coalesce(sum(input_tokens), 0) input, coalesce(sum(output_tokens), 0) output FROM usage WHERE session_id = ? AND kind = 'chat' HAVING count(*) > 0",
    sessionId,
  );
  return row ?? { input: 0, output: 0, rows: 0 };
};

const sessionRow = (sessionId: string) =>
  rowOnShards<{ message_count: number; pending: number }>("SELECT message_count, pending FROM sessions WHERE id = ?", sessionId);

// A completed tool round (the clock tool), then the fault on the model call that follows it.
const afterToolRound = (...fault: Step[]): Step[] => [toolCall("current_time", {}, `toolu_${crypto.randomUUID().slice(0, 8)}`), ...fault];
const threeTimes = (status: 429 | 500 | 529): Step[] => [{ status }, { status }, { status }];

const FAULTS: { name: string; steps: Step[]; code: string }[] = [
  { name: "HTTP 429", steps: afterToolRound(...threeTimes(429)), code: "rate_limited" },
  { name: "HTTP 500", steps: afterToolRound(...threeTimes(500)), code: "model_error" },
  { name: "HTTP 529", steps: afterToolRound(...threeTimes(529)), code: "model_overloaded" },
  { name: "an error event mid-stream", steps: afterToolRound({ ...textReply("this is cut"), error_after: 6, error_type: "api_error" }), code: "model_error" },
];

describe("model faults mid-turn", () => {
  for (const fault of FAULTS) {
    it(`${fault.name} after a tool round: one error event, history as before, the completed call's tokens recorded, the session usable`, async () => {
      const u = await createUser();
      const first = await chat(u.key, { message: "hello" });
      const before = await chatUsage(first.sessionId);
      await script(u.id, ...fault.steps, textReply("recovered"));
      const failed = await chat(u.key, { message: "what time is it?", session_id: first.sessionId });
      expect(failed.events.filter((e) => e.type === "error" || e.type === "done")).toEqual([expect.objectContaining({ type: "error", code: fault.code })]);
      expect((await history(u.key, first.sessionId)).messages.map(saidIn)).toEqual(["hello", "fake reply"]);
      // The tool round's model call completed and was billed: its tokens count against the user's budget.
      const after = await chatUsage(first.sessionId);
      expect(after.rows).toBe(before.rows + 1);
      expect(after.output).toBeGreaterThan(before.output);
      expect(await sessionRow(first.sessionId)).toEqual({ message_count: 2, pending: 0 });

      const again = await chat(u.key, { message: "try again", session_id: first.sessionId });
      expect(again.text).toBe("recovered");
      expect((await history(u.key, first.sessionId)).messages.map(saidIn)).toEqual(["hello", "fake reply", "try again", "recovered"]);
      expect(await sessionRow(first.sessionId)).toEqual({ message_count: 4, pending: 0 });
    });
  }
});

describe("a model stream whose connection drops before the reply ends", () => {
  // No error event and no message_stop: the bytes stop and the connection closes (a proxy or network cut).
  const dropped = (step: Step, after: number): Step => ({ ...(step as Extract<Step, { reply: unknown }>), chunk: 4, drop_after: after });
  for (const [name, step] of [
    ["mid-reply", dropped(textReply("this reply is cut in the middle of a sentence"), 5)],
    ["mid-tool-call", dropped(toolCall("current_time", { zone: "Europe/Lisbon" }, "toolu_drop"), 5)],
  ] as const) {
    it(`${name}: one model_error, nothing of the turn kept, the session usable`, async () => {
      const u = await createUser();
      const first = await chat(u.key, { message: "hello" });
      await script(u.id, step, textReply("recovered"));
      const failed = await chat(u.key, { message: "what time is it?", session_id: first.sessionId });
      expect(failed.events.filter((e) => e.type === "error" || e.type === "done")).toEqual([
        expect.objectContaining({ type: "error", code: "model_error", message: expect.stringMatching(/cut off/) }),
      ]);
      expect((await history(u.key, first.sessionId)).messages.map(saidIn)).toEqual(["hello", "fake reply"]);
      const again = await chat(u.key, { message: "try again", session_id: first.sessionId });
      expect(again.text).toBe("recovered");
      expect((await history(u.key, first.sessionId)).messages.map(saidIn)).toEqual(["hello", "fake reply", "try again", "recovered"]);
    });
  }
});

describe("a model stream that stops sending", () => {
  const saved = env.MODEL_TIMEOUT_MS;
  afterEach(() => {
    if (saved === undefined) delete env.MODEL_TIMEOUT_MS;
    else env.MODEL_TIMEOUT_MS = saved;
  });

  it("is cut after the model timeout with an error event, and the session takes the next turn", async () => {
    // Read when the session object is created: this test's sessions wait at most 2 s for the model.
    env.MODEL_TIMEOUT_MS = "2000";
    const u = await createUser();
    await script(
      u.id,
      { reply: { content: [{ type: "text", text: "I will stop halfway" }], no_thinking: true }, chunk: 3, stall_after: 4 },
      textReply("back again"),
    );
    const stalled = await chat(u.key, { message: "start" });
    expect(stalled.events.at(-1)).toMatchObject({ type: "error", code: "model_error", message: expect.stringMatching(/stopped responding/) });
    const next = await chat(u.key, { message: "still there?", session_id: stalled.sessionId });
    expect(next.text).toBe("back again");
    // Like any model failure before the reply completed, the stalled turn left no trace in history.
    expect((await history(u.key, stalled.sessionId)).messages.map(saidIn)).toEqual(["still there?", "back again"]);
    expect(await count("SELECT count(*) n FROM sessions WHERE id = ? AND pending = 0", stalled.sessionId)).toBe(1);
    const res = await api(u.key, "GET", `/v1/sessions/${stalled.sessionId}`);
    expect(res.status).toBe(200);
  });
});

describe("a write made by a turn that then fails", () => {
  it("retrying the turn records the same observation once: the tool answers with the stored event", async () => {
    const u = await createUser();
    const first = await chat(u.key, { message: "hello" });
    const observe = (id: string) => toolCall("record_observation", { content: "User moved to Lisbon in March", category: "fact" }, id);
    await script(u.id, observe("toolu_obs_1"), ...threeTimes(500));
    const failed = await chat(u.key, { message: "I moved to Lisbon in March", session_id: first.sessionId });
    expect(failed.events.some((e) => e.type === "error")).toBe(true);
    const stored = () => count("SELECT count(*) n FROM context_events WHERE user_id = ?", u.id);
    expect(await stored()).toBe(1);

    await script(u.id, observe("toolu_obs_2"), textReply("Noted."));
    const again = await chat(u.key, { message: "I moved to Lisbon in March", session_id: first.sessionId });
    expect(again.text).toBe("Noted.");
    expect(await stored()).toBe(1);
    const saved = again.events.filter((e) => e.type === "memory_saved");
    const { events } = (await (await api(u.key, "GET", "/v1/memory/events")).json()) as { events: { id: string }[] };
    expect(saved).toEqual([expect.objectContaining({ target: "observation", entry_id: events[0]?.id })]);

    // Another session saying the same thing is another observation.
    const other = await chat(u.key, { message: "hi" });
    await script(u.id, observe("toolu_obs_3"), textReply("Noted."));
    await chat(u.key, { message: "I moved to Lisbon in March", session_id: other.sessionId });
    expect(await stored()).toBe(2);
  });

  it("the same words in a later turn of the session are a new observation: a change of mind back is recorded", async () => {
    const u = await createUser();
    const say = (content: string) => [toolCall("record_observation", { content, category: "preference" }), textReply("Noted.")];
    await script(u.id, ...say("User's favourite colour is blue"));
    const first = await chat(u.key, { message: "my favourite colour is blue" });
    await script(u.id, ...say("User's favourite colour is green"));
    await chat(u.key, { message: "now it is green", session_id: first.sessionId });
    await script(u.id, ...say("User's favourite colour is blue"));
    await chat(u.key, { message: "no, blue again", session_id: first.sessionId });
    const { events } = (await (await api(u.key, "GET", "/v1/memory/events")).json()) as { events: { content: string }[] };
    expect(events.map((e) => e.content)).toEqual(["User's favourite colour is blue", "User's favourite colour is green", "User's favourite colour is blue"]);
  });
});
