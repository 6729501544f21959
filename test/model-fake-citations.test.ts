/**
 * The fake Messages API takes `search_result` blocks as the API documents them and cites them the way the API
 * does, so the real SDK's stream accumulator assembles the citations the product reads.
 * https://platform.claude.com/docs/en/build-with-claude/search-results
 */

import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { WEB_SEARCH_TOOL } from "../src/bridge/web-search";
import { fakeClient, script } from "./helpers";

const client = fakeClient;

const user = () => `usr_cite_${crypto.randomUUID().slice(0, 8)}`;

const result = (source: string, text: string): Anthropic.SearchResultBlockParam => ({
  type: "search_result",
  source,
  title: `Memory: ${source}`,
  content: [{ type: "text", text }],
  citations: { enabled: true },
});

const params = (key: string, content: Anthropic.ContentBlockParam[], over: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) => ({
  model: "claude-sonnet-5-5",
  max_tokens: 1024,
  messages: [{ role: "user" as const, content }],
  metadata: { user_id: key },
  ...over,
});

/** How the fake answers a request whose first user message is `content` (a malformed block as any JSON value). */
async function status(content: unknown[], over: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) {
  try {
    await client().messages.create(params(user(), content as Anthropic.ContentBlockParam[], over));
    return { status: 200, message: "" };
  } catch (err) {
    if (err instanceof Anthropic.APIError) return { status: err.status, message: err.message, type: (err.error as { error?: { type?: string } })?.error?.type };
    throw err;
  }
}

const question: Anthropic.TextBlockParam = { type: "text", text: "where do I live?" };

describe("search_result blocks in the fake Messages API", () => {
  it("rejects a block without a required field, of the wrong type, with empty or non-text content, or an unknown field, with 400", async () => {
    const good = result("engram:fact:fct_1", "I live in Lyon");
    const { source: _s, ...noSource } = good;
    const { title: _t, ...noTitle } = good;
    const { content: _c, ...noContent } = good;
    for (const bad of [
      noSource,
      noTitle,
      noContent,
      { ...good, source: 17 },
      { ...good, title: null },
      { ...good, content: "I live in Lyon" },
      { ...good, content: [] },
      { ...good, content: [{ type: "text", text: "" }] },
      { ...good, content: [{ type: "image", source: {} }] },
      { ...good, citations: { enabled: "yes" } },
      { ...good, url: "https://example.com" },
    ]) {
      const r = await status([bad, question]);
      expect(r, JSON.stringify(bad)).toMatchObject({ status: 400, type: "invalid_request_error" });
    }
    expect(await status([good, question])).toMatchObject({ status: 200 });
  });

  it("rejects mixed citation settings, citations off beside web search, and a search result in an assistant message", async () => {
    const on = result("engram:fact:fct_1", "I live in Lyon");
    const off = { ...result("engram:fact:fct_2", "I play the cello"), citations: { enabled: false } };
    expect(await status([on, off, question])).toMatchObject({ status: 400, message: expect.stringContaining("all search results") });
    expect(await status([off, question], { tools: [WEB_SEARCH_TOOL] })).toMatchObject({ status: 400, message: expect.stringContaining("web search") });
    expect(await status([on, question], { tools: [WEB_SEARCH_TOOL] })).toMatchObject({ status: 200 });
    const inAssistant = await status([question], {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [on] as unknown as Anthropic.ContentBlockParam[] },
        { role: "user", content: "where do I live?" },
      ],
    });
    expect(inAssistant).toMatchObject({ status: 400, message: expect.stringContaining("user messages") });
  });

  it("streams a scripted citation as a citations_delta after the text, which the SDK assembles onto the text block", async () => {
    const key = user();
    await script(key, {
      reply: {
        content: [
          { type: "text", text: "You live in Lyon." },
          { type: "text", text: " Since 2025.", cites: [{ search_result: 1 }] },
        ],
      },
    });
    const stream = client().messages.stream(
      params(key, [result("engram:fact:fct_0", "I play the cello"), result("engram:fact:fct_1", "I live in Lyon"), question]),
    );
    const seenDeltas: string[] = [];
    const citations: unknown[] = [];
    stream.on("citation", (c) => citations.push(c));
    for await (const e of stream) if (e.type === "content_block_delta") seenDeltas.push(e.delta.type);
    const message = await stream.finalMessage();
    const expected = {
      type: "search_result_location",
      source: "engram:fact:fct_1",
      title: "Memory: engram:fact:fct_1",
      cited_text: "I live in Lyon",
      search_result_index: 1,
      start_block_index: 0,
      end_block_index: 1,
    };
    expect(citations).toEqual([expected]);
    expect(message.content.filter((b) => b.type === "text")).toEqual([
      { type: "text", text: "You live in Lyon." },
      { type: "text", text: " Since 2025.", citations: [expected] },
    ]);
    // After the text it supports (the Citations page, "Streaming support").
    expect(seenDeltas.at(-1)).toBe("citations_delta");
    expect(seenDeltas.filter((t) => t === "citations_delta")).toHaveLength(1);
  });

  it("refuses a script that cites a search result the request does not have", async () => {
    const key = user();
    await script(key, { reply: { content: [{ type: "text", text: "You live in Lyon.", cites: [{ search_result: 3 }] }] } });
    await expect(client().messages.create(params(key, [result("engram:fact:fct_1", "I live in Lyon"), question]))).rejects.toThrow(/cites search result 3/);
  });
});
