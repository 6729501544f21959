import { env } from "cloudflare:test";
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { modelTools, turnTools } from "../src/bridge/toolset";
import { WEB_SEARCH_TOOL } from "../src/bridge/web-search";
import { type MessageParam, runAgentLoop } from "../src/chat/loop";
import { loadConfig } from "../src/config/config";
import type { ChatEvent } from "../src/core/events";
import { createDb } from "../src/db/client";
import { createOfflineFetch, OFFLINE_NOTICE } from "../src/model/offline";
import type { WireCitation } from "../src/model/wire";
import { chatTurn, state } from "./bridge-helpers";
import type { Step } from "./fake-anthropic/worker";
import { api, createUser, script, seen, shape, textReply } from "./helpers";

const citation: Extract<WireCitation, { type: "web_search_result_location" }> = {
  type: "web_search_result_location",
  url: "https://example.com/release",
  title: "Release notes",
  cited_text: 'Version 2 ships "today" \\ with ünïcode',
  encrypted_index: "EqQBCgIYAhIM",
};
const search = { type: "server_tool_use" as const, id: "srvtoolu_1", name: "web_search", input: { query: "engram release" } };
const found = {
  type: "web_search_tool_result" as const,
  tool_use_id: "srvtoolu_1",
  content: [{ type: "web_search_result", url: citation.url, title: citation.title, encrypted_content: "EqgfCioIARgBIiQ3", page_age: "1 day ago" }],
};
const searched: Step = {
  reply: { content: [search, found, { type: "text", text: "Version 2 ships today.", citations: [citation] }] },
};

describe("native web search", () => {
  it("is attached to every turn with max_uses 5; an old client's web_search toggle is accepted and changes nothing", async () => {
    const u = await createUser();
    await script(u.id, textReply("a"), textReply("b"), textReply("c"));
    await chatTurn(u.key, { message: "hi" });
    for (const web_search of [false, true]) {
      const t = await chatTurn(u.key, { message: "hi", web_search });
      expect(t.end).toMatchObject({ type: "done" });
    }
    const sent = await seen(u.id);
    expect(sent).toHaveLength(3);
    for (const request of sent) {
      expect(request.tools?.find((t) => t.name === "web_search")).toEqual({ type: "web_search_20250305", name: "web_search", max_uses: 5 });
    }
    // Still a boolean: anything else is a mistake worth a 400.
    expect((await api(u.key, "POST", "/v1/chat", { message: "hi", web_search: "yes" })).status).toBe(400);
    expect(await seen(u.id)).toHaveLength(3);
  });

  it("streams the search and its citations, and keeps the server blocks in history unchanged", async () => {
    const u = await createUser();
    await script(u.id, searched, textReply("You're welcome."));
    const t = await chatTurn(u.key, { message: "when does engram 2 ship?" });
    const types = shape(t.events);
    expect(types).toEqual(["session", "tool_use", "tool_result", "citation", "done"]);
    expect(t.events.find((e) => e.type === "tool_use")).toMatchObject({ name: "web_search", reason: 'Searching the web for "engram release"' });
    expect(t.events.find((e) => e.type === "tool_result")).toMatchObject({ id: "srvtoolu_1", name: "web_search", ok: true });
    expect(t.events.find((e) => e.type === "citation")).toEqual({
      type: "citation",
      url: citation.url,
      title: citation.title,
      cited_text: citation.cited_text,
    });
    expect(t.end).toMatchObject({ type: "done", tools_used: ["web_search"] });

    const assistant = (await state(u.key, t.sessionId)).messages[1]?.content ?? [];
    expect(assistant.map((b) => b.type)).toEqual(["thinking", "server_tool_use", "web_search_tool_result", "text"]);
    expect(assistant[1]).toMatchObject(search);
    expect(assistant[2]).toEqual(found);
    expect(assistant[3]).toMatchObject({ text: "Version 2 ships today.", citations: [citation] });
    // The next turn sends the server blocks back as stored (an earlier turn's thinking is dropped).
    await chatTurn(u.key, { message: "thanks", session_id: t.sessionId });
    expect((await seen(u.id))[1]?.messages[1]?.content).toEqual(assistant.slice(1));
  });

  it("counts the searches the API ran and adds what they cost to the turn's usage; a failed search is not charged", async () => {
    const u = await createUser();
    const failed = {
      type: "web_search_tool_result" as const,
      tool_use_id: "srvtoolu_2",
      content: { type: "web_search_tool_result_error", error_code: "unavailable" },
    };
    const again = { ...search, id: "srvtoolu_2" };
    // The API's usage for the call: two searches ran, the API bills the one that returned results.
    const usage = {
      input_tokens: 1_200,
      output_tokens: 300,
      cache_creation_input_tokens: 2_000,
      cache_read_input_tokens: 10_000,
      server_tool_use: { web_search_requests: 1 },
    };
    await script(u.id, {
      reply: { content: [search, found, again, failed, { type: "text", text: "Version 2 ships today.", citations: [citation] }], usage },
    });
    const t = await chatTurn(u.key, { message: "when does engram 2 ship?" });
    expect(t.end).toMatchObject({ type: "done", usage: { web_search_requests: 1 } });
    expect(loadConfig(env).chatModel).toBe("claude-sonnet-5-5");
    const rows = (await (await api(u.key, "GET", `/v1/sessions/${t.sessionId}/usage`)).json()) as { turns: { cost_usd: number }[] };
    expect(rows.turns).toHaveLength(1);
    // Sonnet 5.5's list prices per million tokens: 1,200 input at $2, 2,000 cache writes at $2.50, 10,000 cache
    // reads at $0.10, 300 output at $10 = $0.0114; plus one search at $0.01.
    expect(rows.turns[0]?.cost_usd).toBeCloseTo(0.0214, 6);
  });

  it("continues a pause_turn by sending the paused message back", async () => {
    const u = await createUser();
    await script(u.id, { reply: { content: [search, found], stop_reason: "pause_turn" } }, textReply("Here is what I found."));
    const t = await chatTurn(u.key, { message: "research engram" });
    expect(t.end).toMatchObject({ type: "done", stop_reason: "end_turn" });
    const second = (await seen(u.id))[1];
    expect(second?.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: [{ type: "thinking" }, { type: "server_tool_use" }, { type: "web_search_tool_result" }],
    });
    const h = await state(u.key, t.sessionId);
    expect(h.messages.map((m) => m.role)).toEqual(["user", "assistant", "assistant"]);
  });

  it("leaves the offline model working with the web_search tool attached", async () => {
    const config = { ...loadConfig(env), anthropicApiKey: undefined };
    const client = new Anthropic({ apiKey: "offline", baseURL: "http://offline.test", fetch: createOfflineFetch(), maxRetries: 0 });
    const events: ChatEvent[] = [];
    const persisted: MessageParam[] = [];
    const outcome = await runAgentLoop({
      client,
      model: "m",
      maxTokens: 200,
      maxIterations: 4,
      system: "offline",
      messages: [{ role: "user", content: [{ type: "text", text: "hello there" }] }],
      tools: turnTools([], []),
      alwaysAllow: new Set(),
      toolCtx: {
        db: createDb(env.DB),
        env,
        config,
        userId: "usr_offline",
        plan: "free",
        sessionId: "s",
        siteId: null,
        projectId: null,
        emit: () => undefined,
        turn: new Map(),
        injected: new Map(),
      },
      signal: new AbortController().signal,
      emit: (e) => events.push(e),
      persist: async (m) => void persisted.push(...m),
    });
    expect(outcome).toMatchObject({ kind: "done", stopReason: "end_turn" });
    expect(events.map((e) => (e.type === "text" ? e.delta : "")).join("")).toContain(OFFLINE_NOTICE);
    expect(persisted[0]).toMatchObject({ role: "assistant", content: [{ type: "text" }] });
    expect(modelTools(turnTools([], []))).toContainEqual(WEB_SEARCH_TOOL);
  });
});
