/**
 * Chat on the default model against the fake that enforces the current models' contract: tool turns
 * session after session, the text between tool calls streamed, every stop reason handled, a rejected
 * or refused turn leaving history as it was, and the prompt cache used.
 */
import { describe, expect, it } from "vitest";
import { api, chat, createUser, history, type SeenRequest, script, seenRaw, shape, textReply, toolCall } from "./helpers";

const T = 60_000;

describe("chat on the current models", () => {
  it(
    "runs a tool turn, then another tool turn in the same session, then a plain one (thinking passed back as the API verifies it)",
    async () => {
      const u = await createUser();
      await script(
        u.id,
        toolCall("current_time", {}, "toolu_a1", "Checking."),
        textReply("It is noon."),
        toolCall("current_time", {}, "toolu_b1"),
        toolCall("current_time", {}, "toolu_b2"),
        textReply("Still noon."),
        textReply("Bye."),
      );
      const first = await chat(u.key, { message: "what time is it?" });
      expect(first.events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
      const second = await chat(u.key, { message: "and now?", session_id: first.sessionId });
      expect(second.events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
      expect(second.text).toBe("Still noon.");
      const third = await chat(u.key, { message: "thanks", session_id: first.sessionId });
      expect(third.text).toBe("Bye.");
      const requests = (await seenRaw(u.id)) as (SeenRequest & { thinking?: { type: string; display?: string } })[];
      expect(requests).toHaveLength(6);
      for (const r of requests) {
        expect(r.model).toBe("claude-sonnet-5-5");
        expect(r.thinking).toEqual({ type: "adaptive", display: "summarized" });
        expect(r).not.toHaveProperty("temperature");
        expect(r).not.toHaveProperty("tool_choice");
        expect(r.messages.at(-1)?.role).toBe("user");
      }
    },
    T,
  );

  it(
    "streams the notes the model writes between tool calls as thinking events",
    async () => {
      const u = await createUser();
      await script(
        u.id,
        {
          reply: {
            content: [
              { type: "thinking", thinking: "I'll check the clock first." },
              { type: "tool_use", id: "toolu_n", name: "current_time", input: {} },
            ],
          },
        },
        {
          reply: {
            content: [
              { type: "thinking", thinking: "Got it, now answering." },
              { type: "text", text: "Noon." },
            ],
          },
        },
      );
      const { events } = await chat(u.key, { message: "time?" });
      const thinking = events.flatMap((e) => (e.type === "thinking" ? [e.delta] : [])).join("");
      expect(thinking).toBe("I'll check the clock first.Got it, now answering.");
      const firstThinking = events.findIndex((e) => e.type === "thinking");
      expect(firstThinking).toBeLessThan(events.findIndex((e) => e.type === "tool_use"));
      expect(events.slice(events.findIndex((e) => e.type === "tool_result")).some((e) => e.type === "thinking")).toBe(true);
    },
    T,
  );

  it(
    "ends a turn whose tool call max_tokens cut: no dangling call stored, a notice says why, the session goes on",
    async () => {
      const u = await createUser();
      await script(
        u.id,
        {
          reply: {
            content: [
              { type: "text", text: "Let me look that up" },
              { type: "tool_use", id: "toolu_cut", name: "current_time", input: { zone: "Europe/Lisbon" } },
            ],
            stop_reason: "max_tokens",
            truncate_tool_input: true,
          },
        },
        textReply("Here you go."),
      );
      const cut = await chat(u.key, { message: "time in Lisbon?" });
      expect(shape(cut.events)).toEqual(["session", "notice", "done"]);
      expect(cut.events.find((e) => e.type === "notice")).toMatchObject({ code: "truncated" });
      expect(cut.events.at(-1)).toMatchObject({ type: "done", stop_reason: "max_tokens" });
      const h = await history(u.key, cut.sessionId);
      expect(h.messages.flatMap((m) => m.content).some((b) => b.type === "tool_use")).toBe(false);
      const next = await chat(u.key, { message: "try again", session_id: cut.sessionId });
      expect(next.text).toBe("Here you go.");
    },
    T,
  );

  it(
    "says so when the model ends its turn with no answer to show (only thinking, or nothing), and the session goes on",
    async () => {
      const u = await createUser();
      await script(
        u.id,
        { reply: { content: [{ type: "thinking", thinking: "The answer is 42; I will say so." }] } },
        toolCall("current_time", {}, "toolu_e1"),
        { reply: { content: [], no_thinking: true } },
        textReply("It is 42."),
      );
      const quiet = await chat(u.key, { message: "what is the answer?" });
      expect(shape(quiet.events)).toEqual(["session", "notice", "done"]);
      expect(quiet.events.find((e) => e.type === "notice")).toMatchObject({ code: "empty" });
      expect(quiet.events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
      // An empty reply after tool results is said the same way.
      const after = await chat(u.key, { message: "and the time?", session_id: quiet.sessionId });
      expect(after.events.filter((e) => e.type === "notice")).toEqual([expect.objectContaining({ code: "empty" })]);
      const next = await chat(u.key, { message: "say it again", session_id: quiet.sessionId });
      expect(next.text).toBe("It is 42.");
      expect(next.events.some((e) => e.type === "notice")).toBe(false);
    },
    T,
  );

  it(
    "reports a refusal, takes the refused turn out of history, and the session goes on",
    async () => {
      const u = await createUser();
      await script(
        u.id,
        textReply("Hello!"),
        toolCall("current_time", {}, "toolu_r"),
        {
          reply: {
            content: [{ type: "text", text: "I" }],
            stop_reason: "refusal",
            stop_details: { type: "refusal", category: "cyber", explanation: "This request was declined." },
          },
        },
        textReply("Happy to help with that."),
      );
      const first = await chat(u.key, { message: "hi" });
      const before = await history(u.key, first.sessionId);
      const refused = await chat(u.key, { message: "something refused", session_id: first.sessionId });
      expect(refused.events.find((e) => e.type === "refusal")).toEqual({ type: "refusal", category: "cyber", explanation: "This request was declined." });
      expect(refused.events.at(-1)).toMatchObject({ type: "done", stop_reason: "refusal" });
      expect((await history(u.key, first.sessionId)).messages).toEqual(before.messages);
      const next = await chat(u.key, { message: "something else", session_id: first.sessionId });
      expect(next.text).toBe("Happy to help with that.");
    },
    T,
  );

  it(
    "leaves history exactly as it was when the API rejects the turn with a 400",
    async () => {
      const u = await createUser();
      await script(u.id, textReply("Hello!"), toolCall("current_time", {}, "toolu_x"), { status: 400, message: "bad request" }, textReply("Back."));
      const first = await chat(u.key, { message: "hi" });
      const before = await history(u.key, first.sessionId);
      const failed = await chat(u.key, { message: "time?", session_id: first.sessionId });
      expect(failed.events.at(-1)).toMatchObject({ type: "error", code: "model_error" });
      expect((await history(u.key, first.sessionId)).messages).toEqual(before.messages);
      expect((await chat(u.key, { message: "again", session_id: first.sessionId })).text).toBe("Back.");
    },
    T,
  );

  it(
    "caches the stable prefix and earlier turns: done.usage reports cache reads from the second turn on",
    async () => {
      const u = await createUser();
      await api(u.key, "PUT", "/v1/brain/soul", {
        content: `Ana, a baker in Porto. ${"She bakes sourdough every morning and sells it at the market. ".repeat(60)}`,
      });
      const first = await chat(u.key, { message: "hello" });
      const second = await chat(u.key, { message: "tell me more", session_id: first.sessionId });
      const third = await chat(u.key, { message: "and more", session_id: first.sessionId });
      const usage = (e: (typeof first.events)[number] | undefined) => (e?.type === "done" ? e.usage : undefined);
      expect(usage(first.events.at(-1))?.cache_creation_input_tokens).toBeGreaterThan(500);
      expect(usage(second.events.at(-1))?.cache_read_input_tokens).toBeGreaterThan(500);
      expect(usage(third.events.at(-1))?.cache_read_input_tokens).toBeGreaterThan(usage(second.events.at(-1))?.cache_read_input_tokens ?? 0);
      const requests = await seenRaw(u.id);
      const marks = (r: SeenRequest | undefined) => JSON.stringify(r).split('"cache_control"').length - 1;
      expect(requests.every((r) => marks(r) >= 1 && marks(r) <= 4)).toBe(true);
      expect(typeof requests[2]?.system === "string" ? requests[2].system : requests[2]?.system[0]?.text).toBe(
        typeof requests[0]?.system === "string" ? requests[0].system : requests[0]?.system[0]?.text,
      );
    },
    T,
  );
});
