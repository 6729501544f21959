/**
 * Background calls that need data back (consolidation, session summaries) use structured outputs:
 * `output_config.format` with a JSON Schema generated from a zod schema, and the JSON comes back as the
 * reply's text, with the least thinking the model allows (request.ts). Forced `tool_choice` is rejected
 * by the current Sonnet and Opus models, so nothing here forces a tool. https://platform.claude.com/docs/en/build-with-claude/structured-outputs
 *
 * The schema subset the API accepts: every object closed (`additionalProperties: false`), no recursion,
 * no numeric or length constraints. Wire schemas are written with `z.strictObject` and plain types;
 * the domain schema validates ranges after parsing.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import type { ModelClient } from "./anthropic";
import { backgroundRequest } from "./request";

export type JsonFormat = { type: "json_schema"; schema: Record<string, unknown> };

/** The `output_config.format` of a wire schema. Its `title` names the schema (the offline model's rules use it). */
export function jsonFormat(schema: z.ZodType, title: string): JsonFormat {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>;
  return { type: "json_schema", schema: { ...rest, title } };
}

/** Why a structured call gave nothing usable (refusal, cut by max_tokens, not JSON). */
export class StructuredOutputError extends Error {
  override name = "StructuredOutputError";
}

export type StructuredCall = {
  client: ModelClient;
  model: string;
  system: string;
  prompt: string;
  format: JsonFormat;
  maxTokens: number;
  /** Sent as metadata.user_id (an opaque id, never user content). */
  userId: string;
  /** Ends the call (it then throws an abort error). */
  signal?: AbortSignal;
};

/** The parsed JSON of the reply (not yet validated) and the usage, which is spent whatever the outcome. */
export async function callStructured(call: StructuredCall): Promise<{ value: unknown; usage: Anthropic.Usage; error?: StructuredOutputError }> {
  const message = await call.client.messages.create(
    {
      model: call.model,
      max_tokens: call.maxTokens,
      system: call.system,
      messages: [{ role: "user", content: call.prompt }],
      ...backgroundRequest(call.model, call.format),
      metadata: { user_id: call.userId },
    },
    call.signal ? { signal: call.signal } : undefined,
  );
  const usage = message.usage;
  if (message.stop_reason === "refusal") return { value: undefined, usage, error: new StructuredOutputError("the model refused") };
  if (message.stop_reason === "max_tokens") return { value: undefined, usage, error: new StructuredOutputError("the output was cut at max_tokens") };
  // Thinking blocks may come first; the JSON is the text.
  const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
  try {
    return { value: JSON.parse(text) as unknown, usage };
  } catch {
    return { value: undefined, usage, error: new StructuredOutputError("the output is not JSON") };
  }
}
