/**
 * The stored continuation of a suspended turn: everything needed to resume the loop exactly where it
 * stopped. It is one JSON value, written with one JSON.stringify and read with one JSON.parse; messages
 * and tools are nested JSON values, never strings holding JSON, so nothing is ever escaped twice.
 * `v` names the format; a blob no format describes is reported and treated as no continuation.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "@hono/zod-openapi";
import { PendingCall, type ToolPendingEnvelope } from "../core/events";
import { ClientToolDef } from "./client-tools";

const Block = z.looseObject({ type: z.string() });
const MessageShape = z.object({ role: z.enum(["user", "assistant"]), content: z.union([z.string(), z.array(Block)]) });
const Message = z.custom<Anthropic.MessageParam>((v) => MessageShape.safeParse(v).success, "not a Messages API message");
const ToolResultShape = z.looseObject({ type: z.literal("tool_result"), tool_use_id: z.string() });
const ToolResult = z.custom<Anthropic.ToolResultBlockParam>((v) => ToolResultShape.safeParse(v).success, "not a tool_result block");
const SearchResultShape = z.looseObject({
  type: z.literal("search_result"),
  source: z.string(),
  title: z.string(),
  content: z.array(z.object({ type: z.literal("text"), text: z.string() })),
});
const SearchResult = z.custom<Anthropic.SearchResultBlockParam>((v) => SearchResultShape.safeParse(v).success, "not a search_result block");

/** The turn's unpersisted messages: the last one is the assistant message whose calls are pending. */
const TurnTail = z
  .array(Message)
  .min(1)
  .refine((m) => m.at(-1)?.role === "assistant", "the last message must be the assistant's");

export type PendingCalls = [PendingCall, ...PendingCall[]];

export const nonEmpty = <T>(items: readonly T[]): items is [T, ...T[]] => items.length > 0;

export const Usage = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_read_input_tokens: z.number().optional(),
  cache_creation_input_tokens: z.number().optional(),
});

const Stored = z.object({
  v: z.literal(2),
  user_id: z.string(),
  session_id: z.string(),
  site_id: z.string().nullable(),
  project_id: z.string().nullable(),
  model: z.string(),
  system: z.string(),
  /** The turn's evidence (core/evidence.ts): not in history, so kept here for the requests that resume it. */
  evidence: z.array(SearchResult).optional(),
  messages: TurnTail,
  /** tool_results already known for the pending assistant message (server tools, earlier answers). */
  results: z.array(ToolResult),
  pending: z.tuple([PendingCall], PendingCall),
  client_tools: z.array(ClientToolDef),
  server_tools: z.array(z.string()),
  tools_used: z.array(z.string()),
  iterations: z.number().int().min(0),
  usage: Usage,
  counters: z.record(z.string(), z.number()),
  /** The prompt's sections and their ids, as the model saw them. */
  injected: z.record(z.string(), z.array(z.string())),
  stream: z.boolean(),
  created_at: z.number(),
  expires_at: z.number(),
});
export type Continuation = z.infer<typeof Stored>;

/**
 * What a turn carries from one segment to the next besides its messages: who and where, the model, the prompt,
 * the tools, its progress and per-turn caps, and its deadline.
 */
export const TurnState = Stored.omit({ v: true, messages: true, results: true, pending: true });
export type TurnState = z.infer<typeof TurnState>;

/** Written through the schema, so the bytes stored are exactly the bytes a later decode re-encodes to. */
export const encodeContinuation = (c: Continuation): string => JSON.stringify(Stored.parse(c));

/** Null (and a log line) for a blob the format does not describe. */
export function decodeContinuation(text: string): Continuation | null {
  const parsed = Stored.safeParse(JSON.parse(text));
  if (!parsed.success) {
    console.error(JSON.stringify({ continuation: "unreadable", issues: parsed.error.issues.slice(0, 3) }));
    return null;
  }
  return parsed.data;
}

/** The envelope that ends a suspended turn; `call_id` and friends name the first pending call. */
export function envelopeOf(c: Continuation): ToolPendingEnvelope {
  const [first] = c.pending;
  return {
    tool_pending: true,
    session_id: c.session_id,
    call_id: first.call_id,
    tool_name: first.tool_name,
    tool_input: first.tool_input,
    model: c.model,
    agentic: true,
    tools_used: c.tools_used,
    pending_calls: c.pending,
    expires_at: c.expires_at,
  };
}
