/**
 * The offline model: a deterministic stand-in for Claude used when no ANTHROPIC_API_KEY is set.
 * It speaks the Messages API (JSON and SSE) through the real SDK's `fetch` option and says plainly that
 * it is offline. What it does with tools comes from the rules each capability registers (offline-rule.ts,
 * run by offline-plan.ts, documented in docs/offline-model.md): it calls declared tools the user asks for,
 * answers structured-output requests, reports tool results truthfully, and cites the recalled memory its
 * answer uses (offline-recall.ts).
 */
import { approxTokens, fnv1a } from "../lib/text";
import { describeOutcome, planReply, recallText } from "./offline-plan";
import { citedRecall, recalledResults, shownFacts } from "./offline-recall";
import { NO_OFFLINE_RULES, type OfferedTool, type OfflineRules } from "./offline-rule";
import { schemaInstance } from "./schema-instance";
import { messageEvents, messageJson, sseResponse, type WireBlock, type WireMessage } from "./wire";

type Block = {
  type: string;
  text?: string;
  content?: unknown;
  is_error?: boolean;
  name?: string;
  id?: string;
  tool_use_id?: string;
  source?: string;
  title?: string;
};
type Msg = { role: "user" | "assistant"; content: string | Block[] };
export type OfflineRequest = {
  model: string;
  system?: string | { text: string }[];
  messages: Msg[];
  tools?: OfferedTool[];
  output_config?: { format?: { type: string; schema: Record<string, unknown> } | null };
  stream?: boolean;
};

/**
 * Produces the JSON of a structured-output request (`output_config.format`), e.g. consolidation.
 * Skills are keyed by the schema's `title`; the capability that asks supplies the rule through
 * `createModelClient`. Without one, the reply is the smallest value the schema allows.
 */
export type StructuredSkill = (req: OfflineRequest) => unknown;
export type OfflineSkills = Readonly<Record<string, StructuredSkill>>;

export const OFFLINE_NOTICE = "(offline model: no ANTHROPIC_API_KEY is set, so replies are rule-based)";

// The per-turn context block (chat/prompt.ts) is not what the user said.
const textOf = (content: Msg["content"]) =>
  typeof content === "string"
    ? content
    : content
        .filter((b) => b.type === "text" && !(b.text ?? "").startsWith("<turn_context>"))
        .map((b) => b.text ?? "")
        .join("\n");

const systemText = (s: OfflineRequest["system"]) => (typeof s === "string" ? s : (s ?? []).map((b) => b.text).join("\n"));

const hashId = (s: string) => fnv1a(s).toString(36);

function afterTools(req: OfflineRequest, results: Block[], rules: OfflineRules): Pick<WireMessage, "content" | "stop_reason"> {
  const calls = req.messages.at(-2)?.content;
  const nameOf = (r: Block) => (Array.isArray(calls) ? calls.find((b) => b.type === "tool_use" && b.id === r.tool_use_id)?.name : undefined);
  const asText = (r: Block) => (typeof r.content === "string" ? r.content : JSON.stringify(r.content));
  const said = results.map((r) => describeOutcome({ name: nameOf(r), content: asText(r), isError: r.is_error === true }, rules));
  return { content: [{ type: "text", text: `${[...new Set(said)].join(" ")} ${OFFLINE_NOTICE}` }], stop_reason: "end_turn" };
}

/** The reply to a request; `rules`: the registered chat rules (without them it only answers and calls what is named). */
export function offlineReply(
  req: OfflineRequest,
  skills: OfflineSkills = {},
  rules: OfflineRules = NO_OFFLINE_RULES,
): Pick<WireMessage, "content" | "stop_reason"> {
  const format = req.output_config?.format;
  if (format?.type === "json_schema") {
    const title = typeof format.schema.title === "string" ? format.schema.title : "";
    const skill = skills[title];
    return { content: [{ type: "text", text: JSON.stringify(skill ? skill(req) : schemaInstance(format.schema)) }], stop_reason: "end_turn" };
  }
  const last = req.messages.at(-1);
  const blocks = last && typeof last.content !== "string" ? last.content : [];
  const results = blocks.filter((b) => b.type === "tool_result");
  const said = last ? textOf(last.content).trim() : "";
  // Results with words after them: a turn stopped after its tools ran, then a new message. Answer the message.
  if (results.length > 0 && said === "") return afterTools(req, results, rules);
  // MEMORY, the profile and the user's projects reach the model in the system prompt or in the turn's context block;
  // recalled facts as search results.
  const context = `${systemText(req.system)}\n${blocks.map((b) => b.text ?? "").join("\n")}`;
  const recalled = recalledResults(req.messages);
  const tools = req.tools ?? [];
  const turn = { said, tools, offers: (name: string) => tools.some((t) => t.name === name), context, facts: shownFacts(recalled) };
  const plan = planReply(turn, rules);
  if (plan && "text" in plan) return { content: [{ type: "text", text: plan.text }], stop_reason: "end_turn" };
  if (plan) {
    const content: WireBlock[] = [
      { type: "text", text: plan.lead },
      ...plan.calls.map(
        (c, i): WireBlock => ({ type: "tool_use", id: `toolu_off_${hashId(`${said}${req.messages.length}#${i}`)}`, name: c.name, input: c.input }),
      ),
    ];
    return { content, stop_reason: "tool_use" };
  }
  const text = `Hello! I'm engram's assistant ${OFFLINE_NOTICE}. You said: "${said.slice(0, 200)}".${recallText(context, rules)}`;
  return { content: [{ type: "text", text }, ...citedRecall(said, recalled)], stop_reason: "end_turn" };
}

/** A `fetch` that answers POST /v1/messages like the Messages API, for the SDK's `fetch` option. */
export const createOfflineFetch =
  (skills: OfflineSkills = {}, rules: OfflineRules = NO_OFFLINE_RULES) =>
  (input: RequestInfo | URL, init?: RequestInit): Promise<Response> =>
    offlineFetch(input, init, skills, rules);

async function offlineFetch(input: RequestInfo | URL, init: RequestInit | undefined, skills: OfflineSkills, rules: OfflineRules): Promise<Response> {
  const request = new Request(input, init);
  if (request.method !== "POST" || !new URL(request.url).pathname.endsWith("/v1/messages")) {
    return Response.json({ type: "error", error: { type: "not_found_error", message: "offline model: only POST /v1/messages" } }, { status: 404 });
  }
  const req = (await request.json()) as OfflineRequest;
  const reply = offlineReply(req, skills, rules);
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
