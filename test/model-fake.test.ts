/**
 * The fake Messages API enforces the documented contract of the current models (docs/models.md), so
 * the product's tests can fail where the real API would. Driven through the real SDK.
 */

import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { MODEL_IDS } from "../src/config/models";
import { backgroundRequest } from "../src/model/request";
import { fakeClient, script } from "./helpers";

const client = fakeClient;

const user = () => `usr_fake_${crypto.randomUUID().slice(0, 8)}`;
type Params = Anthropic.MessageCreateParamsNonStreaming;
const base = (key: string, over: Partial<Params> = {}): Params => ({
  model: "claude-sonnet-5-5",
  max_tokens: 1024,
  messages: [{ role: "user", content: "hello" }],
  metadata: { user_id: key },
  ...over,
});

/** How the API answers `params`; streamed when asked (the SDK refuses large `max_tokens` without streaming). */
async function rejection(params: Params, stream = false): Promise<{ status: number | undefined; message: string }> {
  try {
    await (stream ? client().messages.stream(params).finalMessage() : client().messages.create(params));
  } catch (err) {
    if (err instanceof Anthropic.APIError) return { status: err.status, message: err.message };
    throw err;
  }
  return { status: 200, message: "" };
}

const tool: Anthropic.Tool = { name: "lookup", description: "look something up", input_schema: { type: "object", properties: {} } };

/** A tool call, then the request that continues it, as a well-behaved client sends it. */
async function toolTurn(key: string, model = "claude-sonnet-5-5") {
  await script(key, {
    reply: {
      content: [
        { type: "thinking", thinking: "I need the lookup." },
        { type: "tool_use", id: "toolu_1", name: "lookup", input: {} },
      ],
    },
  });
  const first = await client().messages.create(base(key, { model, tools: [tool], thinking: { type: "adaptive", display: "summarized" } }));
  const messages: Anthropic.MessageParam[] = [
    { role: "user", content: "hello" },
    { role: "assistant", content: first.content as Anthropic.ContentBlockParam[] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "found" }] },
  ];
  return { first, messages, params: base(key, { model, tools: [tool], thinking: { type: "adaptive", display: "summarized" }, messages }) };
}

describe("fake Messages API: request rules of the current models", () => {
  it("rejects sampling parameters, prefill and thinking budgets with 400", async () => {
    const key = user();
    // The SDK no longer even types them: send them as an older client would.
    expect((await rejection({ ...base(key), temperature: 0.2 } as Params)).status).toBe(400);
    expect((await rejection({ ...base(key), top_p: 0.9 } as Params)).status).toBe(400);
    expect(
      (
        await rejection(
          base(key, {
            messages: [
              { role: "user", content: "hi" },
              { role: "assistant", content: "Sure," },
            ],
          }),
        )
      ).message,
    ).toMatch(/prefill/);
    expect((await rejection(base(key, { thinking: { type: "enabled", budget_tokens: 2000 } }))).message).toMatch(/thinking\.type\.enabled/);
  });

  it("applies each model's thinking and tool_choice rules", async () => {
    const key = user();
    const forced = { tools: [tool], tool_choice: { type: "tool" as const, name: "lookup" } };
    expect((await rejection(base(key, { thinking: { type: "disabled" } }))).message).toMatch(/between_tools/);
    expect((await rejection(base(key, { thinking: { type: "between_tools" }, output_config: { effort: "max" } }))).status).toBe(400);
    expect((await rejection(base(key, { thinking: { type: "between_tools" }, output_config: { effort: "low" } }))).status).toBe(200);
    expect((await rejection(base(key, { model: "claude-opus-5-5", thinking: { type: "disabled" } }))).status).toBe(400);
    expect((await rejection(base(key, forced))).status).toBe(400);
    expect((await rejection(base(key, { ...forced, model: "claude-opus-5-5" }))).status).toBe(400);
    expect((await rejection(base(key, { ...forced, model: "claude-haiku-5-5" }))).status).toBe(400);
    expect((await rejection(base(key, { ...forced, model: "claude-haiku-5-5", thinking: { type: "disabled" } }))).status).toBe(200);
    expect((await rejection(base(key, { model: "claude-sonnet-4-0" }))).status).toBe(404);
  });

  it("holds Fable 5.2 to Fable 5.1's rules: thinking always on, no forced tool, at most 128K output; engram's background call passes", async () => {
    const key = user();
    const format = { type: "json_schema" as const, schema: { type: "object", properties: {}, additionalProperties: false } };
    for (const model of ["claude-fable-5-1", "claude-fable-5-2"]) {
      expect((await rejection(base(key, { model, thinking: { type: "disabled" } }))).message, model).toMatch(/thinking\.type\.disabled/);
      expect((await rejection(base(key, { model, thinking: { type: "between_tools" } }))).status, model).toBe(400);
      expect((await rejection(base(key, { model, tools: [tool], tool_choice: { type: "any" } }))).status, model).toBe(400);
      expect((await rejection(base(key, { model, max_tokens: 128_001 }), true)).status, model).toBe(400);
      expect((await rejection(base(key, { model, max_tokens: 128_000, output_config: { effort: "max" } }), true)).status, model).toBe(200);
      expect((await rejection(base(key, { model, ...backgroundRequest(model, format) }))).status, model).toBe(200);
    }
  });

  it("rejects a tool_use left without its tool_result", async () => {
    const key = user();
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: "hello" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_x", name: "lookup", input: {} }] },
      { role: "user", content: "and now?" },
    ];
    expect((await rejection(base(key, { tools: [tool], messages }))).message).toMatch(/without `tool_result`/);
  });

  it("allows at most four cache breakpoints", async () => {
    const key = user();
    const marked = (text: string): Anthropic.TextBlockParam => ({ type: "text", text, cache_control: { type: "ephemeral" } });
    expect((await rejection(base(key, { system: [marked("a"), marked("b"), marked("c"), marked("d"), marked("e")] }))).message).toMatch(/maximum of 4/);
  });
});

describe("fake Messages API: thinking blocks", () => {
  it("returns thinking text only with display summarized, signed either way", async () => {
    const key = user();
    await script(key, {
      reply: {
        content: [
          { type: "thinking", thinking: "Let me think." },
          { type: "text", text: "hi" },
        ],
      },
    });
    await script(key, {
      reply: {
        content: [
          { type: "thinking", thinking: "Let me think." },
          { type: "text", text: "hi" },
        ],
      },
    });
    const shown = await client().messages.create(base(key, { thinking: { type: "adaptive", display: "summarized" } }));
    const hidden = await client().messages.create(base(key));
    expect(shown.content[0]).toMatchObject({ type: "thinking", thinking: "Let me think.", signature: expect.stringMatching(/^sig_/) });
    expect(hidden.content[0]).toMatchObject({ type: "thinking", thinking: "", signature: expect.stringMatching(/^sig_/) });
  });

  it("accepts a tool-use turn passed back unchanged, on every current model", async () => {
    for (const model of MODEL_IDS) {
      const { params } = await toolTurn(user(), model);
      const reply = await client().messages.create(params);
      expect(reply.stop_reason).toBe("end_turn");
    }
  });

  it("bills thinking as output tokens whether or not its text is returned", async () => {
    const key = user();
    const reply = {
      reply: {
        content: [
          { type: "thinking" as const, thinking: "Weighing the options at length. ".repeat(40) },
          { type: "text" as const, text: "Done." },
        ],
      },
    };
    await script(key, reply, reply);
    const shown = await client().messages.create(base(key, { thinking: { type: "adaptive", display: "summarized" } }));
    const hidden = await client().messages.create(base(key, { thinking: { type: "adaptive", display: "omitted" } }));
    expect(hidden.content[0]).toMatchObject({ type: "thinking", thinking: "" });
    // The same thinking, billed the same (to the rounding of the fake's 4-characters-a-token count).
    expect(Math.abs(hidden.usage.output_tokens - shown.usage.output_tokens)).toBeLessThanOrEqual(2);
    expect(hidden.usage.output_tokens).toBeGreaterThan(300);
  });

  it("rejects edited, reordered, dropped or foreign thinking blocks within a tool-use turn with 400", async () => {
    const key = user();
    const { messages, params } = await toolTurn(key);
    const assistant = messages[1]?.content as Anthropic.ContentBlockParam[];
    const thinking = assistant[0] as Anthropic.ThinkingBlockParam;
    const edited = [{ ...thinking, thinking: `${thinking.thinking} (edited)` }, ...assistant.slice(1)];
    const reordered = [...assistant.slice(1), thinking];
    const dropped = assistant.slice(1);
    for (const content of [edited, reordered]) {
      const r = await rejection({ ...params, messages: [messages[0]!, { role: "assistant", content }, messages[2]!] });
      expect(r.status).toBe(400);
    }
    expect((await rejection({ ...params, messages: [messages[0]!, { role: "assistant", content: dropped }, messages[2]!] })).message).toMatch(
      /Expected `thinking`/,
    );
    // Another model's thinking, or the same thinking after an earlier message changed: bound elsewhere.
    expect((await rejection({ ...params, model: "claude-opus-5-5" })).message).toMatch(/bound to a different conversation/);
    expect((await rejection({ ...params, messages: [{ role: "user", content: "hello!" }, ...messages.slice(1)] })).message).toMatch(
      /bound to a different conversation/,
    );
    expect((await rejection({ ...params, system: "a new system prompt" })).message).toMatch(/bound to a different conversation/);
    expect((await rejection(params)).status).toBe(200);
    // Thinking blocks do not cross models, not even between Fable versions: each signature is bound to the
    // model that wrote it (docs/models.md; that only Fable 5.2 reads Fable 5.2's thinking is this same rule).
    // The fake models nothing more Fable-specific, so this checks both directions, and that each turn
    // continues on its own model.
    for (const [from, to] of [
      ["claude-fable-5-2", "claude-fable-5-1"],
      ["claude-fable-5-1", "claude-fable-5-2"],
    ] as const) {
      const fable = await toolTurn(user(), from);
      expect((await rejection({ ...fable.params, model: to })).message).toMatch(/bound to a different conversation/);
      expect((await rejection(fable.params)).status).toBe(200);
    }
  });
});

describe("fake Messages API: stop reasons, structured outputs, caching", () => {
  it("streams a refusal with its stop_details", async () => {
    const key = user();
    await script(key, {
      reply: { content: [{ type: "text", text: "I" }], stop_reason: "refusal", stop_details: { type: "refusal", category: "cyber", explanation: "declined" } },
    });
    const msg = await client().messages.stream(base(key)).finalMessage();
    expect(msg.stop_reason).toBe("refusal");
    expect(msg.stop_details).toMatchObject({ category: "cyber", explanation: "declined" });
  });

  it("cuts a tool call's input when max_tokens stops the reply", async () => {
    const key = user();
    await script(key, {
      reply: {
        content: [{ type: "tool_use", id: "toolu_cut", name: "lookup", input: { query: "a long query that does not fit" } }],
        stop_reason: "max_tokens",
        truncate_tool_input: true,
      },
    });
    const msg = await client()
      .messages.stream(base(key, { tools: [tool] }))
      .finalMessage();
    expect(msg.stop_reason).toBe("max_tokens");
    expect(msg.content.find((b) => b.type === "tool_use")?.input).not.toEqual({ query: "a long query that does not fit" });
  });

  it("answers output_config.format with JSON matching the schema", async () => {
    const key = user();
    const schema = {
      type: "object",
      properties: { facts: { type: "array", items: { type: "string" } }, mood: { type: "string" } },
      required: ["facts", "mood"],
      additionalProperties: false,
    };
    await script(key, { structured: true, reply: { json: { facts: ["likes tea"], mood: "calm" } } });
    const msg = await client().messages.create(base(key, { model: "claude-haiku-5-5", output_config: { format: { type: "json_schema", schema } } }));
    const text = msg.content.find((b) => b.type === "text");
    expect(JSON.parse(text?.type === "text" ? text.text : "")).toEqual({ facts: ["likes tea"], mood: "calm" });
  });

  it("rejects JSON Schema keywords structured outputs do not support with 400, accepts the ones it does", async () => {
    const key = user();
    const wrap = (field: Record<string, unknown>) => ({
      type: "object",
      properties: { field },
      required: ["field"],
      additionalProperties: false,
    });
    const request = (schema: Record<string, unknown>) => base(key, { model: "claude-haiku-5-5", output_config: { format: { type: "json_schema", schema } } });
    const unsupported = [
      { type: "array", items: { type: "string" }, maxItems: 5 },
      { type: "array", items: { type: "string" }, minItems: 2 },
      { type: "string", format: "color" },
      { type: "string", minLength: 1 },
      { type: "number", maximum: 1 },
      { enum: [{ a: 1 }, { b: 2 }] },
      { $ref: "https://example.com/schema.json" },
      { type: "object", properties: {}, additionalProperties: true },
    ];
    for (const field of unsupported) expect((await rejection(request(wrap(field)))).status, JSON.stringify(field)).toBe(400);
    const supported = [
      { type: "array", items: { type: "string" }, minItems: 1 },
      { type: "string", format: "date-time" },
      { enum: ["a", 1, null] },
      { anyOf: [{ type: "string" }, { type: "null" }] },
    ];
    for (const field of supported) expect((await rejection(request(wrap(field)))).status, JSON.stringify(field)).toBe(200);
  });

  it("writes the prefix up to a breakpoint once, then reads it back while the prefix is unchanged", async () => {
    const key = user();
    const system: Anthropic.TextBlockParam[] = [{ type: "text", text: "Stable instructions. ".repeat(200), cache_control: { type: "ephemeral" } }];
    const first = await client().messages.create(base(key, { system }));
    const second = await client().messages.create(base(key, { system, messages: [{ role: "user", content: "another question" }] }));
    const changed = await client().messages.create(base(key, { system: [{ ...system[0]!, text: `Changed. ${system[0]?.text}` }] }));
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(512);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(changed.usage.cache_read_input_tokens).toBe(0);
    // A prefix under the model's minimum is not cached at all.
    const tiny = await client().messages.create(base(key, { system: [{ type: "text", text: "short", cache_control: { type: "ephemeral" } }] }));
    expect(tiny.usage.cache_creation_input_tokens).toBe(0);
  });
});
