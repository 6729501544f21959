import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { StoredMessage } from "../src/sessions/history";
import { foldDue, planFold } from "../src/sessions/history-budget";
import { api, chat, createUser, script, seen, textReply } from "./helpers";

const T = 60_000;
// About 6,000 tokens each: three turns exceed the default 16k-token history budget.
const long = (word: string, lead = "") => `${lead}${`${word} `.repeat(4000)}`.trim();
const summaryStep = (summary: string, observations: { content: string; category: string }[] = []) => ({
  structured: true,
  reply: { content: [{ type: "text" as const, text: JSON.stringify({ summary, observations }) }] },
});
const requestText = (r: { messages: unknown[] }) => JSON.stringify(r.messages);

/** A session whose third turn passes the history budget, and whose summary call is refused ("c" is that turn's reply). */
async function pastBudgetWithRefusedSummary() {
  const u = await createUser();
  await script(u.id, textReply("a"), textReply("b"));
  const first = await chat(u.key, { message: long("alpha") });
  await chat(u.key, { message: long("beta"), session_id: first.sessionId });
  await script(u.id, { structured: true, reply: { content: [{ type: "text", text: "" }], stop_reason: "refusal" } }, textReply("c"));
  const third = await chat(u.key, { message: long("gamma"), session_id: first.sessionId });
  return { u, first, third };
}

describe("bounded history", () => {
  it(
    "folds the oldest turns into a session summary, sends it instead of them, keeps stored history, and hands stated facts to memory",
    async () => {
      const u = await createUser();
      await script(u.id, textReply("noted alpha"), textReply("noted beta"));
      const first = await chat(u.key, { message: long("alpha", "My name is Ana. ") });
      await chat(u.key, { message: long("beta"), session_id: first.sessionId });
      await script(
        u.id,
        summaryStep("Ana shared a long alpha list, then a beta list.", [{ content: "User's name is Ana", category: "fact" }]),
        textReply("got gamma"),
      );
      const third = await chat(u.key, { message: long("gamma"), session_id: first.sessionId });
      expect(third.text).toBe("got gamma");

      const requests = await seen(u.id);
      const summaryCall = requests.find((r) => "output_config" in r) as unknown as {
        model: string;
        tool_choice?: unknown;
        output_config: { format: { schema: { title: string } } };
        messages: { content: string }[];
      };
      expect(summaryCall.model).toBe(env.BACKGROUND_MODEL);
      expect(summaryCall.tool_choice).toBeUndefined();
      expect(summaryCall.output_config.format.schema.title).toBe("session_summary");
      expect(summaryCall.messages[0]?.content).toContain("alpha alpha");

      const chats = requests.filter((r) => !("output_config" in r));
      expect(chats).toHaveLength(3);
      const last = chats[2];
      if (!last) throw new Error("no third chat request");
      expect(requestText(last)).toContain("Ana shared a long alpha list");
      expect(requestText(last)).toContain("gamma gamma");
      expect(requestText(last)).not.toContain("alpha alpha");
      expect(requestText(last)).not.toContain("beta beta");
      expect(last.messages[0]?.role).toBe("user");
      // The whole request's history is within the budget; the full history was not.
      expect(requestText(last).length / 4).toBeLessThan(16_000);
      expect(requestText(chats[1] ?? last).length + 24_000).toBeGreaterThan(16_000 * 4);

      const res = await api(u.key, "GET", `/v1/sessions/${first.sessionId}`);
      const body = (await res.json()) as { messages: unknown[]; summary: { text: string; through: number; messages: number } | null };
      expect(body.messages).toHaveLength(6);
      expect(body.summary).toMatchObject({ text: "Ana shared a long alpha list, then a beta list.", messages: 4 });

      const events = (await (await api(u.key, "GET", "/v1/memory/events")).json()) as {
        events: { content: string; source_metadata: Record<string, unknown> }[];
      };
      expect(events.events.find((e) => e.content === "User's name is Ana")?.source_metadata).toMatchObject({
        source: "session_summary",
        session_id: first.sessionId,
      });
    },
    T,
  );

  it(
    "a summary the model refuses leaves the turn working on the longer history, and nothing is stored",
    async () => {
      const { u, first, third } = await pastBudgetWithRefusedSummary();
      expect(third.text).toBe("c");
      const last = (await seen(u.id)).filter((r) => !("output_config" in r)).at(-1);
      expect(requestText(last ?? { messages: [] })).toContain("alpha alpha");
      const body = (await (await api(u.key, "GET", `/v1/sessions/${first.sessionId}`)).json()) as { summary: unknown };
      expect(body.summary).toBeNull();
    },
    T,
  );

  it(
    "after a failed summary the next turn does not call the background model again; the one after retries and folds",
    async () => {
      const { u, first } = await pastBudgetWithRefusedSummary();
      const summaryCalls = async () => (await seen(u.id)).filter((r) => "output_config" in r).length;
      expect(await summaryCalls()).toBe(1);

      // Had the fourth turn tried to fold, its summary call would have taken this reply and the chat none.
      await script(u.id, textReply("d"));
      const fourth = await chat(u.key, { message: "short one", session_id: first.sessionId });
      expect(fourth.text).toBe("d");
      expect(await summaryCalls()).toBe(1);

      await script(u.id, summaryStep("Alpha, beta and gamma lists."), textReply("e"));
      const fifth = await chat(u.key, { message: "another short one", session_id: first.sessionId });
      expect(fifth.text).toBe("e");
      expect(await summaryCalls()).toBe(2);
      const body = (await (await api(u.key, "GET", `/v1/sessions/${first.sessionId}`)).json()) as { summary: { text: string } | null };
      expect(body.summary?.text).toBe("Alpha, beta and gamma lists.");
    },
    T,
  );

  it(
    "another user's session and its summary are not reachable",
    async () => {
      const [a, b] = [await createUser(), await createUser()];
      await script(a.id, textReply("hi"));
      const mine = await chat(a.key, { message: "hello" });
      expect((await api(b.key, "GET", `/v1/sessions/${mine.sessionId}`)).status).toBe(404);
    },
    T,
  );
});

describe("where the history is cut", () => {
  const row = (seq: number, role: "user" | "assistant", content: StoredMessage["content"]): StoredMessage => ({ seq, role, content, created_at: 0 });
  const big = "x".repeat(8000);
  const rows: StoredMessage[] = [
    row(1, "user", [{ type: "text", text: big }]),
    row(2, "assistant", [{ type: "tool_use", id: "t1", name: "lookup", input: {} }]),
    row(3, "user", [{ type: "tool_result", tool_use_id: "t1", content: big }]),
    row(4, "assistant", [{ type: "text", text: big }]),
    row(5, "user", [{ type: "text", text: "next question" }]),
    row(6, "assistant", [{ type: "tool_use", id: "t2", name: "lookup", input: {} }]),
    row(7, "user", [{ type: "tool_result", tool_use_id: "t2", content: big }]),
  ];

  it("never between a tool_use and its tool_result: only where a user turn starts", () => {
    for (const budget of [1000, 3000, 5000, 7000]) {
      const { fold, keep } = planFold(rows, budget);
      const first = keep[0];
      expect(first?.role).toBe("user");
      expect(JSON.stringify(first?.content)).not.toContain("tool_result");
      expect(fold.length + keep.length).toBe(rows.length);
    }
  });

  it("waits longer after each failed summary, but always tries once the history is twice the budget", () => {
    const budget = 16_000;
    expect(foldDue(null, 3, 17_000, budget)).toBe(true);
    // One failure at the turn whose user message is seq 5: the next turn (seq 7) waits, the one after tries.
    expect(foldDue({ count: 1, at_seq: 5 }, 7, 17_000, budget)).toBe(false);
    expect(foldDue({ count: 1, at_seq: 5 }, 9, 17_000, budget)).toBe(true);
    // Three in a row: four turns wait.
    expect(foldDue({ count: 3, at_seq: 5 }, 13, 17_000, budget)).toBe(false);
    expect(foldDue({ count: 3, at_seq: 5 }, 15, 17_000, budget)).toBe(true);
    // The wait stops growing at 32 turns.
    expect(foldDue({ count: 40, at_seq: 5 }, 5 + 2 * 32 + 1, 17_000, budget)).toBe(true);
    expect(foldDue({ count: 3, at_seq: 5 }, 7, 2 * budget + 1, budget)).toBe(true);
  });

  it("folds nothing while the history fits, and always keeps the turn in progress", () => {
    expect(planFold(rows, 100_000).fold).toEqual([]);
    expect(planFold(rows, 10).keep.map((r) => r.seq)).toEqual([5, 6, 7]);
  });
});
