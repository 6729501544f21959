import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { createOfflineFetch, OFFLINE_NOTICE, offlineReply } from "../src/model/offline";

const client = (skills = {}) => new Anthropic({ apiKey: "offline", baseURL: "http://offline.test", fetch: createOfflineFetch(skills), maxRetries: 0 });
const saveTool = { name: "update_customer_brain", description: "save", input_schema: { type: "object" as const } };

describe("offline model", () => {
  it("answers through the real SDK's streaming path and says it is offline", async () => {
    const stream = client().messages.stream({ model: "m", max_tokens: 100, messages: [{ role: "user", content: "hello" }] });
    const deltas: string[] = [];
    stream.on("text", (t) => deltas.push(t));
    const msg = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toContain(OFFLINE_NOTICE);
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
  });

  it("is deterministic", async () => {
    const req = { model: "m", max_tokens: 100, messages: [{ role: "user" as const, content: "same" }] };
    const [a, b] = await Promise.all([client().messages.create(req), client().messages.create(req)]);
    expect(a.content).toEqual(b.content);
    expect(a.id).toBe(b.id);
  });

  it("saves a stated preference with a memory tool, then acknowledges the tool result", async () => {
    const first = await client().messages.create({
      model: "m",
      max_tokens: 100,
      tools: [saveTool],
      messages: [{ role: "user", content: "Remember that I prefer tea over coffee" }],
    });
    const call = first.content.find((b) => b.type === "tool_use");
    expect(first.stop_reason).toBe("tool_use");
    expect(call).toMatchObject({ name: "update_customer_brain", input: { target: "memory", content: "Remember that I prefer tea over coffee" } });
    const reply = offlineReply({
      model: "m",
      messages: [
        { role: "user", content: "Remember that I prefer tea" },
        { role: "assistant", content: first.content as never },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call?.type === "tool_use" ? call.id : "", content: "saved" }] },
      ],
    });
    expect(reply.stop_reason).toBe("end_turn");
    expect(JSON.stringify(reply.content)).toContain("saved that");
  });

  it("calls the clock tool and reports what it returned", () => {
    const clock = { name: "current_time", description: "t", input_schema: { type: "object" as const } };
    const first = offlineReply({ model: "m", tools: [clock], messages: [{ role: "user", content: "what time is it?" }] });
    const call = first.content.find((b) => b.type === "tool_use");
    expect(call).toMatchObject({ name: "current_time", input: {} });
    const then = offlineReply({
      model: "m",
      messages: [
        { role: "user", content: "what time is it?" },
        { role: "assistant", content: first.content as never },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call?.type === "tool_use" ? call.id : "", content: "2026-01-01T00:00:00Z" }] },
      ],
    });
    expect(JSON.stringify(then.content)).toContain("current_time says: 2026-01-01T00:00:00Z");
  });

  it("does not call tools it was not given, and quotes what it remembers", () => {
    const reply = offlineReply({
      model: "m",
      system: "## Memory\n<remembered>\n- likes tea\n- lives in Lisbon\n</remembered>",
      messages: [{ role: "user", content: "I prefer short answers" }],
    });
    expect(reply.stop_reason).toBe("end_turn");
    expect(JSON.stringify(reply.content)).toContain("lives in Lisbon");
  });

  it("answers a structured-output request from the caller's rule, chosen by the schema's title", async () => {
    const format = { type: "json_schema" as const, schema: { title: "summary", type: "object", properties: { ok: { type: "number" } }, required: ["ok"], additionalProperties: false } };
    const msg = await client({ summary: () => ({ ok: 1 }) }).messages.create({ model: "m", max_tokens: 100, output_config: { format }, messages: [{ role: "user", content: "go" }] });
    expect(msg.content[0]).toMatchObject({ type: "text" });
    expect(JSON.parse(msg.content[0]?.type === "text" ? msg.content[0].text : "")).toEqual({ ok: 1 });
    const other = await client().messages.create({ model: "m", max_tokens: 100, output_config: { format }, messages: [{ role: "user", content: "go" }] });
    // No rule for this schema: the smallest value it allows, still valid JSON.
    expect(JSON.parse(other.content[0]?.type === "text" ? other.content[0].text : "")).toEqual({ ok: 0 });
  });
});
