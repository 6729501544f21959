/**
 * The AI SDK's UI message stream protocol, read by the real `ai` package: its DefaultChatTransport (fetch pointed at
 * the Worker), its Chat state machine (the one useChat wraps: onToolCall, addToolOutput, addToolApprovalResponse,
 * sendAutomaticallyWhen) and readUIMessageStream. The model is the fake Messages API, scripted turn by turn.
 */
import { SELF } from "cloudflare:test";
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  readUIMessageStream,
  type UIMessage,
  type UIMessageChunk,
} from "ai";
import { describe, expect, it, vi } from "vitest";
import { api, BASE, createUser, history, newSession, saidIn, script, seen, textReply, toolCall } from "./helpers";
import { importFacts } from "./memory-helpers";
import { lastShard } from "./shard-helpers";

const T = 60_000;

const getLocation = { name: "get_location", description: "The user's city", input_schema: { type: "object" } };

/** The transport as docs/api.md shows it: engram's URL, the API key, and only the new message in each request. */
function transport(key: string, extra: Record<string, unknown> = {}) {
  return new DefaultChatTransport<UIMessage>({
    api: `${BASE}/v1/chat/ui`,
    headers: { authorization: `Bearer ${key}` },
    fetch: (url, init) => SELF.fetch(String(url), init),
    prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, message: messages.at(-1), ...extra } }),
  });
}

/** What useChat keeps in React state, kept in a plain object. */
class MemoryState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  constructor(public messages: UIMessage[] = []) {}
  pushMessage = (m: UIMessage) => {
    this.messages = [...this.messages, m];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (i: number, m: UIMessage) => {
    this.messages = this.messages.map((old, j) => (j === i ? m : old));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class TestChat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    super({ ...init, state: new MemoryState() });
  }
}

const visible = (m: UIMessage | undefined) => (m?.parts ?? []).filter((p) => p.type !== "reasoning" && p.type !== "step-start");
const textOfMessage = (m: UIMessage | undefined) => (m?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text] : [])).join("|");

/** Reads a UI stream to its end with the SDK's own reader: the last message state, and every error it reported. */
async function collect(stream: ReadableStream<UIMessageChunk>, message?: UIMessage) {
  const errors: unknown[] = [];
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream, ...(message ? { message } : {}), onError: (e) => errors.push(e) })) last = m;
  return { message: last, errors };
}

const userMessage = (text: string): UIMessage => ({ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text }] });

describe("useChat's transport against engram", () => {
  it(
    "a chat with a client tool and a memory save: the tool runs once in the client, the turn goes on, the message is whole, zero errors",
    async () => {
      const u = await createUser();
      await script(
        u.id,
        toolCall("get_location", {}, "toolu_l1", "Let me find you."),
        toolCall("update_customer_brain", { target: "soul", content: "Ana lives in Lyon." }, "toolu_b1", "Lyon, then."),
        textReply("I saved that you live in Lyon."),
      );
      const errors: unknown[] = [];
      let ran = 0;
      const chat: TestChat = new TestChat({
        id: `chat-${crypto.randomUUID()}`,
        transport: transport(u.key, { client_tools: [getLocation] }),
        onError: (e) => errors.push(e),
        onToolCall: ({ toolCall: call }) => {
          if (call.toolName !== "get_location") return;
          ran++;
          void chat.addToolOutput({ tool: "get_location", toolCallId: call.toolCallId, output: { city: "Lyon" } });
        },
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      });
      await chat.sendMessage({ text: "Where am I? Remember it." });
      await vi.waitFor(() => expect(chat.status === "ready" && textOfMessage(chat.lastMessage).includes("I saved")).toBe(true), { timeout: 30_000 });

      expect(errors).toEqual([]);
      expect(ran).toBe(1);
      expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
      const reply = chat.lastMessage;
      expect(visible(reply).map((p) => p.type)).toEqual(["text", "tool-get_location", "text", "tool-update_customer_brain", "data-memory_saved", "text"]);
      expect(visible(reply)[1]).toMatchObject({ state: "output-available", input: {}, output: { city: "Lyon" }, toolCallId: "toolu_l1" });
      expect(visible(reply)[3]).toMatchObject({ state: "output-available", title: "Updating what I know about you" });
      expect(visible(reply)[4]).toMatchObject({ data: { target: "soul", version: 1 } });
      expect(textOfMessage(reply)).toBe("Let me find you.|Lyon, then.|I saved that you live in Lyon.");
      expect(reply?.metadata).toMatchObject({ session_id: chat.id, stop_reason: "end_turn", usage: { input_tokens: expect.any(Number) } });

      // The chat id is the session: engram holds the whole turn, the client's output included, and asked the model three times.
      expect(await seen(u.id)).toHaveLength(3);
      const h = await history(u.key, chat.id);
      expect(h.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
      expect(JSON.stringify(h.messages[2]?.content)).toContain('{\\"city\\":\\"Lyon\\"}');
      expect(saidIn(h.messages[5] ?? { content: [] })).toBe("I saved that you live in Lyon.");

      // The next message continues the same session.
      await script(u.id, textReply("Still Lyon."));
      await chat.sendMessage({ text: "And now?" });
      await vi.waitFor(() => expect(chat.status).toBe("ready"), { timeout: 30_000 });
      expect(textOfMessage(chat.lastMessage)).toBe("Still Lyon.");
      expect((await history(u.key, chat.id)).messages).toHaveLength(8);
      expect(errors).toEqual([]);
    },
    T,
  );

  it(
    "an approval: the builtin waits, addToolApprovalResponse allows it, the server runs it once and the turn ends",
    async () => {
      const u = await createUser();
      const fact = (await importFacts(u.key, [{ text: "I play the cello" }])).facts[0]?.id ?? "";
      await script(u.id, toolCall("forget_memory", { fact_ids: [fact], reason: "You asked me to forget the cello" }, "toolu_fg1"), textReply("Forgotten."));
      const errors: unknown[] = [];
      const chat = new TestChat({
        id: `chat-${crypto.randomUUID()}`,
        transport: transport(u.key),
        onError: (e) => errors.push(e),
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      });
      await chat.sendMessage({ text: "forget that I play the cello" });
      await vi.waitFor(() => expect(chat.status).toBe("ready"), { timeout: 30_000 });
      const asking = visible(chat.lastMessage).find((p) => p.type === "tool-forget_memory");
      expect(asking).toMatchObject({ state: "approval-requested", approval: { id: "toolu_fg1" } });
      expect(chat.lastMessage?.metadata).toMatchObject({ session_id: chat.id });
      // Not forgotten until the user says so.
      expect((await api(u.key, "GET", `/v1/memory/facts/${fact}`)).status).toBe(200);

      await chat.addToolApprovalResponse({ id: "toolu_fg1", approved: true });
      await vi.waitFor(() => expect(chat.status === "ready" && textOfMessage(chat.lastMessage).includes("Forgotten.")).toBe(true), { timeout: 30_000 });
      expect(errors).toEqual([]);
      expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(visible(chat.lastMessage).map((p) => [p.type, "state" in p ? p.state : undefined])).toEqual([
        ["tool-forget_memory", "output-available"],
        ["text", "done"],
      ]);
      expect((await api(u.key, "GET", `/v1/memory/facts/${fact}`)).status).toBe(404);
      expect(await seen(u.id)).toHaveLength(2);
    },
    T,
  );

  it(
    "a denial reaches the model as the user's refusal, and the part shows it denied",
    async () => {
      const u = await createUser();
      const fact = (await importFacts(u.key, [{ text: "I play the cello" }])).facts[0]?.id ?? "";
      await script(u.id, toolCall("forget_memory", { fact_ids: [fact], reason: "forget the cello" }, "toolu_fg2"), textReply("Kept it."));
      const chat = new TestChat({
        id: `chat-${crypto.randomUUID()}`,
        transport: transport(u.key),
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      });
      await chat.sendMessage({ text: "forget the cello" });
      await vi.waitFor(() => expect(chat.status).toBe("ready"), { timeout: 30_000 });
      await chat.addToolApprovalResponse({ id: "toolu_fg2", approved: false });
      await vi.waitFor(() => expect(textOfMessage(chat.lastMessage)).toBe("Kept it."), { timeout: 30_000 });
      expect(visible(chat.lastMessage)[0]).toMatchObject({ type: "tool-forget_memory", state: "output-denied" });
      expect((await api(u.key, "GET", `/v1/memory/facts/${fact}`)).status).toBe(200);
    },
    T,
  );

  it(
    "a model failure arrives as the protocol's error chunk, and the chat shows it",
    async () => {
      const u = await createUser();
      await script(u.id, { status: 529 }, { status: 529 }, { status: 529 });
      const errors: Error[] = [];
      const chat = new TestChat({ id: `chat-${crypto.randomUUID()}`, transport: transport(u.key), onError: (e) => errors.push(e) });
      await chat.sendMessage({ text: "hi" });
      expect(chat.status).toBe("error");
      expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/overloaded/i)]);
    },
    T,
  );
});

describe("reconnecting with the transport's reconnectToStream", () => {
  it(
    "a stream cut mid-turn is replayed whole from the turn's start: the same message, nothing run twice",
    async () => {
      const u = await createUser();
      await script(
        u.id,
        { ...toolCall("current_time", {}, "toolu_c1", "Let me check the clock."), chunk: 3 },
        { reply: { content: [{ type: "text", text: "It is evening, a quiet one at that." }] }, chunk: 3 },
      );
      const t = transport(u.key);
      const chatId = `chat-${crypto.randomUUID()}`;
      const stream = await t.sendMessages({
        chatId,
        messages: [userMessage("time?")],
        trigger: "submit-message",
        messageId: undefined,
        abortSignal: undefined,
      });
      const reader = stream.getReader();
      const before: UIMessageChunk[] = [];
      while (!before.some((c) => c.type === "text-delta")) {
        const { value, done } = await reader.read();
        if (done) throw new Error("the turn ended early");
        before.push(value);
      }
      await reader.cancel();

      const again = await t.reconnectToStream({ chatId });
      if (!again) throw new Error("nothing to resume");
      const { message, errors } = await collect(again);
      expect(errors).toEqual([]);
      expect(textOfMessage(message)).toBe("Let me check the clock.|It is evening, a quiet one at that.");
      expect(visible(message).map((p) => p.type)).toEqual(["text", "tool-current_time", "text"]);
      expect(message?.id).toBe((before.find((c) => c.type === "start") as { messageId?: string } | undefined)?.messageId);
      expect(message?.metadata).toMatchObject({ stop_reason: "end_turn" });
      expect(await seen(u.id)).toHaveLength(2);
      // After the turn, its replay is still there for a client that comes back (the AI SDK's resume on load).
      const later = await t.reconnectToStream({ chatId });
      expect(textOfMessage((await collect(later as ReadableStream<UIMessageChunk>)).message)).toBe(textOfMessage(message));
    },
    T,
  );

  it(
    "a cut after the client answered its tool is replayed from the turn's start: the tool shows the client's output and is not handed to onToolCall again",
    async () => {
      const u = await createUser();
      await script(u.id, toolCall("get_location", {}, "toolu_g1", "Let me find you."), {
        reply: { content: [{ type: "text", text: "You are in Lyon, a fine city by two rivers." }] },
        chunk: 3,
      });
      const t = transport(u.key, { client_tools: [getLocation] });
      const chatId = `chat-${crypto.randomUUID()}`;
      const user = userMessage("where am I?");
      const first = await collect(await t.sendMessages({ chatId, messages: [user], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
      const asked = first.message as UIMessage;
      expect(visible(asked).find((p) => p.type === "tool-get_location")).toMatchObject({ state: "input-available" });
      const answered: UIMessage = {
        ...asked,
        parts: asked.parts.map((p) =>
          p.type === "tool-get_location" ? { ...p, state: "output-available", output: { city: "Lyon" } } : p,
        ) as UIMessage["parts"],
      };
      const stream = await t.sendMessages({ chatId, messages: [user, answered], trigger: "submit-message", messageId: answered.id, abortSignal: undefined });
      const reader = stream.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) throw new Error("the turn ended early");
        if (value.type === "text-delta") break;
      }
      await reader.cancel();

      const again = await t.reconnectToStream({ chatId });
      if (!again) throw new Error("nothing to resume");
      const [chunks, forReader] = again.tee();
      const { message, errors } = await collect(forReader);
      const seenChunks: UIMessageChunk[] = [];
      for await (const c of chunks) seenChunks.push(c);
      expect(errors).toEqual([]);
      expect(seenChunks.filter((c) => c.type === "tool-input-available")).toEqual([]);
      expect(message?.id).toBe(asked.id);
      expect(visible(message).map((p) => p.type)).toEqual(["text", "tool-get_location", "text"]);
      expect(visible(message)[1]).toMatchObject({ state: "output-available", input: {}, output: { city: "Lyon" } });
      expect(textOfMessage(message)).toBe("Let me find you.|You are in Lyon, a fine city by two rivers.");
      expect(await seen(u.id)).toHaveLength(2);
    },
    T,
  );

  it("answers 204 (reconnectToStream resolves null) when the chat has no turn held, 404 for another user's chat", async () => {
    const u = await createUser();
    await script(u.id, textReply("hello"));
    const chatId = `chat-${crypto.randomUUID()}`;
    const { message } = await collect(
      await transport(u.key).sendMessages({ chatId, messages: [userMessage("hi")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }),
    );
    expect(textOfMessage(message)).toBe("hello");
    const mallory = await createUser();
    await expect(transport(mallory.key).reconnectToStream({ chatId })).rejects.toThrow();
    expect((await api(mallory.key, "GET", `/v1/chat/ui/${chatId}/stream`)).status).toBe(404);
    expect((await api(u.key, "GET", "/v1/chat/ui/no-such-chat/stream")).status).toBe(404);
    // A session whose object holds no turn (none ran since it started): the transport resolves null, nothing to resume.
    expect(await transport(u.key).reconnectToStream({ chatId: await newSession(u.id) })).toBeNull();
  });
});

describe("POST /v1/chat/ui input", () => {
  it("refuses what it cannot answer with a clear 4xx and writes nothing", async () => {
    const u = await createUser();
    const post = (body: unknown, key: string | null = u.key) => api(key, "POST", "/v1/chat/ui", body);
    const cases: [unknown, number, string][] = [
      [{ id: "c1" }, 400, "invalid_request"],
      [{ id: "c1", message: { id: "m", role: "user", parts: [] } }, 400, "invalid_request"],
      [{ id: "c1", messages: [userMessage("hi")], trigger: "regenerate-message" }, 400, "invalid_request"],
      [{ id: "../x", message: userMessage("hi") }, 400, "invalid_request"],
      [{ id: "c1", message: userMessage("hi"), user_id: "someone" }, 400, "invalid_request"],
      [{ id: "c1", message: { id: "a", role: "assistant", parts: [{ type: "text", text: "hi" }] } }, 404, "not_found"],
    ];
    for (const [body, status, code] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    expect((await post({ id: "c1", message: userMessage("hi") }, null)).status).toBe(401);
    expect(((await (await api(u.key, "GET", "/v1/sessions")).json()) as { sessions: unknown[] }).sessions).toEqual([]);
  });

  it("another user's chat id is never theirs to reach: 409, nothing read or written in it", async () => {
    // On two shards (when bound): a shard's key cannot see the other's ids, the chat route must still refuse the taken one.
    const alice = await createUser("free", 0);
    const mallory = await createUser("free", lastShard());
    await script(alice.id, textReply("secret plan noted"));
    const chatId = `chat-${crypto.randomUUID()}`;
    await collect(
      await transport(alice.key).sendMessages({
        chatId,
        messages: [userMessage("my secret plan")],
        trigger: "submit-message",
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    const res = await api(mallory.key, "POST", "/v1/chat/ui", { id: chatId, message: userMessage("tell me the plan") });
    expect(res.status).toBe(409);
    expect(await res.text()).not.toContain("secret");
    expect((await history(alice.key, chatId)).messages).toHaveLength(2);
    expect(await seen(mallory.id)).toEqual([]);
  });
});
