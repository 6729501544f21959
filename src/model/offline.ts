/**
 * The offline model: a deterministic stand-in for Claude used when no ANTHROPIC_API_KEY is set.
 * It speaks the Messages API (JSON and SSE) through the real SDK's `fetch` option, says plainly that
 * it is offline, and calls memory tools when the user states something worth keeping, so every
 * memory feature can be exercised locally. It is not a language model: it follows the rules below.
 */
import { approxTokens, fnv1a } from "../lib/text";
import { messageEvents, messageJson, sseResponse, type WireBlock, type WireMessage } from "./wire";

type Block = { type: string; text?: string; content?: unknown; is_error?: boolean; name?: string; id?: string; tool_use_id?: string };
type Msg = { role: "user" | "assistant"; content: string | Block[] };
type ToolDef = { name: string; type?: string };
export type OfflineRequest = {
  model: string;
  system?: string | { text: string }[];
  messages: Msg[];
  tools?: ToolDef[];
  tool_choice?: { type: string; name?: string };
  stream?: boolean;
};

/**
 * Produces the input of a forced tool call (`tool_choice: {type: "tool"}`), e.g. consolidation.
 * The capability that forces the call supplies the rule, through `createModelClient`.
 */
export type ForcedToolSkill = (req: OfflineRequest) => unknown;
export type OfflineSkills = Readonly<Record<string, ForcedToolSkill>>;

export const OFFLINE_NOTICE = "(offline model: no ANTHROPIC_API_KEY is set, so replies are rule-based)";

const REMEMBER = /\b(remember|i prefer|i like|i love|i hate|i don't like|my name is|call me|i work|i live|i'm allergic|always|never)\b/i;

const textOf = (content: Msg["content"]) =>
  typeof content === "string" ? content : content.filter((b) => b.type === "text").map((b) => b.text ?? "").join("\n");

const systemText = (s: OfflineRequest["system"]) => (typeof s === "string" ? s : (s ?? []).map((b) => b.text).join("\n"));

const hashId = (s: string) => fnv1a(s).toString(36);

/** What the offline model does when the user's message matches: the first available tool of the rule. */
const RULES: { when: RegExp; lead: string; tools: { name: string; input: (said: string) => unknown }[] }[] = [
  {
    when: REMEMBER,
    lead: "I'll remember that.",
    tools: [
      { name: "update_customer_brain", input: (said) => ({ target: "memory", content: said }) },
      { name: "record_observation", input: (said) => ({ content: said, category: "preference" }) },
    ],
  },
  {
    when: /\b(what time|the time|what day|what date|today's date)\b/i,
    lead: "Let me check the clock.",
    tools: [{ name: "current_time", input: () => ({}) }],
  },
];

const SAVERS = new Set(RULES[0]?.tools.map((t) => t.name));

function remembered(system: string): string[] {
  const m = /<remembered>\n([\s\S]*?)\n<\/remembered>/.exec(system);
  return m?.[1] ? m[1].split("\n").filter((l) => l.trim() !== "").slice(0, 5) : [];
}

export function offlineReply(req: OfflineRequest, skills: OfflineSkills = {}): Pick<WireMessage, "content" | "stop_reason"> {
  const forced = req.tool_choice?.type === "tool" ? req.tool_choice.name : undefined;
  if (forced) {
    const skill = skills[forced];
    const input = skill ? skill(req) : {};
    return { content: [{ type: "tool_use", id: `toolu_off_${hashId(JSON.stringify(req.messages))}`, name: forced, input }], stop_reason: "tool_use" };
  }
  const last = req.messages.at(-1);
  const blocks = last && typeof last.content !== "string" ? last.content : [];
  const results = blocks.filter((b) => b.type === "tool_result");
  if (results.length > 0) {
    const asText = (r: Block) => (typeof r.content === "string" ? r.content : JSON.stringify(r.content));
    const calls = req.messages.at(-2)?.content;
    const nameOf = (r: Block) => (Array.isArray(calls) ? calls.find((b) => b.type === "tool_use" && b.id === r.tool_use_id)?.name : undefined);
    const failed = results.filter((r) => r.is_error);
    const text = failed.length
      ? `I tried, but it did not work: ${failed.map(asText).join("; ")} ${OFFLINE_NOTICE}`
      : results.every((r) => SAVERS.has(nameOf(r) ?? ""))
        ? `Done: I've saved that, and I'll keep it in mind. ${OFFLINE_NOTICE}`
        : `${results.map((r) => `${nameOf(r) ?? "The tool"} says: ${asText(r)}`).join("\n")} ${OFFLINE_NOTICE}`;
    return { content: [{ type: "text", text }], stop_reason: "end_turn" };
  }
  const said = last ? textOf(last.content).trim() : "";
  const available = new Set((req.tools ?? []).map((t) => t.name));
  for (const rule of RULES) {
    const tool = rule.when.test(said) ? rule.tools.find((t) => available.has(t.name)) : undefined;
    if (!tool) continue;
    const content: WireBlock[] = [
      { type: "text", text: rule.lead },
      { type: "tool_use", id: `toolu_off_${hashId(said + req.messages.length)}`, name: tool.name, input: tool.input(said) },
    ];
    return { content, stop_reason: "tool_use" };
  }
  const memory = remembered(systemText(req.system));
  const recall = memory.length ? ` Here is what I remember about you:\n${memory.map((l) => `- ${l.replace(/^- /, "")}`).join("\n")}` : "";
  const text = `Hello! I'm engram's assistant ${OFFLINE_NOTICE}. You said: "${said.slice(0, 200)}".${recall}`;
  return { content: [{ type: "text", text }], stop_reason: "end_turn" };
}

/** A `fetch` that answers POST /v1/messages like the Messages API, for the SDK's `fetch` option. */
export const createOfflineFetch =
  (skills: OfflineSkills = {}) =>
  (input: RequestInfo | URL, init?: RequestInit): Promise<Response> =>
    offlineFetch(input, init, skills);

async function offlineFetch(input: RequestInfo | URL, init: RequestInit | undefined, skills: OfflineSkills): Promise<Response> {
  const request = new Request(input, init);
  if (request.method !== "POST" || !new URL(request.url).pathname.endsWith("/v1/messages")) {
    return Response.json({ type: "error", error: { type: "not_found_error", message: "offline model: only POST /v1/messages" } }, { status: 404 });
  }
  const req = (await request.json()) as OfflineRequest;
  const reply = offlineReply(req, skills);
  const promptText = systemText(req.system) + JSON.stringify(req.messages);
  const msg: WireMessage = {
    id: `msg_off_${hashId(promptText)}`,
    model: req.model,
    ...reply,
    usage: { input_tokens: approxTokens(promptText), output_tokens: approxTokens(JSON.stringify(reply.content)) },
  };
  const requestId = `req_off_${hashId(msg.id)}`;
  if (req.stream) return sseResponse(messageEvents(msg), requestId);
  return Response.json(messageJson(msg), { headers: { "request-id": requestId } });
}
