/**
 * The stored continuation of a suspended turn: everything needed to resume the loop exactly where it
 * stopped. It is one JSON value, written with one JSON.stringify and read with one JSON.parse; messages
 * and tools are nested JSON values, never strings holding JSON, so nothing is ever escaped twice.
 *
 * Format versions: v2 is written today. v1 (the seed's shape: one pending call, the tool set named by
 * `tools_variant`) is still read, and upgraded on load; blobs without `tools_variant` predate the
 * field and get the server tools only.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "@hono/zod-openapi";
import type { ToolPendingEnvelope } from "../chat/events";
import { serverTools, toolByName } from "../tools/registry";
import { ClientToolDef, McpRef } from "./client-tools";

export const CONTINUATION_VERSION = 2;

const Block = z.looseObject({ type: z.string() });
const MessageShape = z.object({ role: z.enum(["user", "assistant"]), content: z.union([z.string(), z.array(Block)]) });
const Message = z.custom<Anthropic.MessageParam>((v) => MessageShape.safeParse(v).success, "not a Messages API message");
const ToolResultShape = z.looseObject({ type: z.literal("tool_result"), tool_use_id: z.string() });
const ToolResult = z.custom<Anthropic.ToolResultBlockParam>((v) => ToolResultShape.safeParse(v).success, "not a tool_result block");

/** The turn's unpersisted messages: the last one is the assistant message whose calls are pending. */
const TurnTail = z.array(Message).min(1).refine((m) => m.at(-1)?.role === "assistant", "the last message must be the assistant's");

export const PendingCall = z
  .object({
    call_id: z.string(),
    tool_name: z.string(),
    tool_input: z.unknown(),
    /** server: a builtin waiting for approval; client: the client runs it (after asking, if needs_approval). */
    runs: z.enum(["server", "client"]),
    needs_approval: z.boolean(),
    mcp: McpRef.optional(),
  })
  .openapi("PendingCall");
export type PendingCall = z.infer<typeof PendingCall>;
export type PendingCalls = [PendingCall, ...PendingCall[]];

export const nonEmpty = <T>(items: readonly T[]): items is [T, ...T[]] => items.length > 0;

export const Usage = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_read_input_tokens: z.number().optional(),
  cache_creation_input_tokens: z.number().optional(),
});

const Common = {
  user_id: z.string(),
  session_id: z.string(),
  model: z.string(),
  system: z.string(),
  messages: TurnTail,
  tools_used: z.array(z.string()),
  created_at: z.number(),
  expires_at: z.number(),
};

const V2 = z.object({
  v: z.literal(2),
  ...Common,
  site_id: z.string().nullable(),
  project_id: z.string().nullable(),
  /** tool_results already known for the pending assistant message (server tools, earlier answers). */
  results: z.array(ToolResult),
  pending: z.tuple([PendingCall], PendingCall),
  client_tools: z.array(ClientToolDef),
  server_tools: z.array(z.string()),
  iterations: z.number().int().min(0),
  usage: Usage,
  counters: z.record(z.string(), z.number()),
  /** The prompt's sections and their ids; absent in blobs written before tools could read it. */
  injected: z.record(z.string(), z.array(z.string())).default({}),
  stream: z.boolean(),
});
export type Continuation = z.infer<typeof V2>;

const V1 = z.object({
  v: z.literal(1),
  ...Common,
  call_id: z.string(),
  tool_name: z.string(),
  tool_input: z.unknown(),
  tools_variant: z.enum(["server", "server+client"]).optional(),
  client_tools: z.array(ClientToolDef).optional(),
  stream: z.boolean().optional(),
});

const Stored = z.discriminatedUnion("v", [V1, V2]);

function upgradeV1(c: z.infer<typeof V1>): Continuation {
  const builtin = toolByName(serverTools, c.tool_name);
  const runsHere = builtin?.runs === "server";
  return {
    v: 2,
    user_id: c.user_id,
    session_id: c.session_id,
    model: c.model,
    system: c.system,
    messages: c.messages,
    tools_used: c.tools_used,
    created_at: c.created_at,
    expires_at: c.expires_at,
    site_id: null,
    project_id: null,
    results: [],
    pending: [{ call_id: c.call_id, tool_name: c.tool_name, tool_input: c.tool_input, runs: runsHere ? "server" : "client", needs_approval: runsHere }],
    client_tools: (c.tools_variant ?? "server") === "server+client" ? (c.client_tools ?? []) : [],
    server_tools: serverTools.map((t) => t.name),
    iterations: 0,
    usage: { input_tokens: 0, output_tokens: 0 },
    counters: {},
    injected: {},
    stream: c.stream ?? true,
  };
}

/** Written through the schema, so the bytes stored are exactly the bytes a later decode re-encodes to. */
export const encodeContinuation = (c: Continuation): string => JSON.stringify(V2.parse(c));

/** Reads any stored version; null (and a log line) for a blob no version describes. */
export function decodeContinuation(text: string): Continuation | null {
  const parsed = Stored.safeParse(JSON.parse(text));
  if (!parsed.success) {
    console.error(JSON.stringify({ continuation: "unreadable", issues: parsed.error.issues.slice(0, 3) }));
    return null;
  }
  return parsed.data.v === 1 ? upgradeV1(parsed.data) : parsed.data;
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
