import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import { consolidateUser } from "../src/memory/consolidate";
import { createModelClient } from "../src/model/anthropic";
import { createUser, script, seen } from "./helpers";
import { captured, consolidation, getJson, observe } from "./memory-helpers";

const T = 60_000;

/** The least thinking each model allows (docs/models.md): thinking is billed as output and counts toward max_tokens. */
const LEAST_THINKING: Record<string, { thinking: unknown; effort?: string }> = {
  "claude-haiku-5-5": { thinking: { type: "disabled" } },
  "claude-sonnet-5-5": { thinking: { type: "between_tools" }, effort: "low" },
  "claude-opus-5-5": { thinking: { type: "adaptive", display: "omitted" }, effort: "low" },
};

describe("consolidation through structured outputs", () => {
  for (const model of ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5"]) {
    it(
      `works with BACKGROUND_MODEL=${model}: no forced tool_choice, a closed JSON Schema, the wire answer applied`,
      async () => {
        const u = await createUser();
        await observe(u.id, [{ type: "preference", content: "I prefer tea" }]);
        await script(
          u.id,
          consolidation({
            updated_scaffold: '{"Drinks": {"favourite": "tea"}}',
            scaffold_confidence: [{ key: "Drinks", confidence: 1.4 }],
            updated_working_memory: "Likes tea.",
            facts_to_embed: [{ text: "User prefers tea", confidence: 0.8, supersedes: [], connection_id: "" }],
          }),
        );
        const client = createModelClient(loadConfig(env)).client;
        expect((await consolidateUser((await captured(u.id)).deps, { client, model }, u.id)).status).toBe("applied");

        const request = (await seen(u.id)).at(-1) as unknown as {
          model: string;
          tool_choice?: unknown;
          tools?: unknown;
          thinking?: unknown;
          output_config: { format: { type: string; schema: Record<string, unknown> }; effort?: string };
        };
        expect(request.model).toBe(model);
        // Background work spends no output tokens on thinking where the model lets it off, and little elsewhere.
        expect(request.thinking).toEqual(LEAST_THINKING[model]?.thinking);
        expect(request.output_config.effort).toBe(LEAST_THINKING[model]?.effort);
        expect(request.tool_choice).toBeUndefined();
        expect(request.tools).toBeUndefined();
        expect(request.output_config.format.type).toBe("json_schema");
        expect(request.output_config.format.schema).toMatchObject({ type: "object", additionalProperties: false, title: "consolidation" });
        expect(JSON.stringify(request.output_config.format.schema)).not.toMatch(/"(minimum|maximum|minLength|maxLength)"/);

        const scaffold = await getJson<{ scaffold: Record<string, unknown>; confidence: Record<string, { confidence: number }> }>(u.key, "/v1/memory/scaffold");
        expect(scaffold.scaffold).toEqual({ Drinks: { favourite: "tea" } });
        expect(scaffold.confidence.Drinks?.confidence).toBe(1);
      },
      T,
    );
  }

  it(
    "the fake, like the API, rejects a forced tool_choice on Sonnet and Opus",
    async () => {
      const u = await createUser();
      const client = createModelClient(loadConfig(env)).client;
      const forced = (model: string) =>
        client.messages.create({
          model,
          max_tokens: 10,
          messages: [{ role: "user", content: "x" }],
          tools: [{ name: "t", input_schema: { type: "object" } }],
          tool_choice: { type: "tool", name: "t" },
          metadata: { user_id: u.id },
        });
      await expect(forced("claude-sonnet-5-5")).rejects.toMatchObject({ status: 400 });
      await expect(forced("claude-opus-5-5")).rejects.toMatchObject({ status: 400 });
    },
    T,
  );
});
