/**
 * How the offline model answers a user message and what it says about tool results: the registered rules
 * (offline-rule.ts), stage by stage, and its own rule for a declared tool the user asks for by name.
 * docs/offline-model.md describes them for users; keep the two in step.
 */
import { type OfferedTool, type OfflinePlan, type OfflineRules, type OfflineTurn, rulesOf, type StatementPart, type ToolOutcome } from "./offline-rule";
import { isQuestion } from "./offline-words";
import { schemaInstance } from "./schema-instance";

const STOP = new Set(["get", "set", "list", "read", "fetch", "run", "mcp", "the", "tool", "current", "show", "find", "lookup", "search"]);
const keywords = (name: string) =>
  name
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOP.has(w));

/**
 * Fills a tool's input from its schema; the first required string property (else the first optional one)
 * gets an id from the message ("order A-17").
 */
function inputFor(tool: OfferedTool, said: string): unknown {
  const schema = tool.input_schema ?? { type: "object" };
  const input = schemaInstance(schema);
  if (!input || typeof input !== "object" || Array.isArray(input)) return {};
  const id = /\b([A-Z0-9-]*\d[A-Z0-9-]*)\b/i.exec(said)?.[1];
  const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const first = Object.entries(input).find(([, v]) => v === "")?.[0] ?? Object.entries(props).find(([, p]) => p?.type === "string")?.[0];
  return id && first ? { ...input, [first]: id } : input;
}

/**
 * A tool the user asks for: one a rule reads from the message ("what time is it?"), else one for their location,
 * else a declared tool named in the message, among the tools no rule speaks for.
 */
function askedTool(turn: OfflineTurn, rules: OfflineRules): { tool: OfferedTool; lead: string } | undefined {
  const callable = turn.tools.filter((t) => !t.type);
  for (const rule of rulesOf(rules, "ask")) {
    const asked = rule.tool(turn);
    const tool = asked ? callable.find((t) => t.name === asked.name) : undefined;
    if (asked && tool) return { tool, lead: asked.lead };
  }
  const free = callable.filter((t) => !rules.tools.includes(t.name));
  const located = /\b(where am i|my location|where i am|where are we)\b/i.test(turn.said) ? free.find((t) => /location|locate|where/i.test(t.name)) : undefined;
  const words = new Set(turn.said.toLowerCase().split(/[^a-z0-9]+/));
  const tool = located ?? free.find((t) => keywords(t.name).some((k) => words.has(k)));
  return tool ? { tool, lead: `Let me use ${tool.name}.` } : undefined;
}

/**
 * The reply to a user message: a request a rule answers alone, else a tool the user asks for, else what the rules
 * make of a statement (never of a question). Null: nothing to call, a plain answer.
 */
export function planReply(turn: OfflineTurn, rules: OfflineRules): OfflinePlan | { text: string } | null {
  for (const rule of rulesOf(rules, "request")) {
    const answer = rule.answer(turn);
    if (answer) return answer;
  }
  const asked = askedTool(turn, rules);
  if (asked) return { lead: asked.lead, calls: [{ name: asked.tool.name, input: inputFor(asked.tool, turn.said) }] };
  if (isQuestion(turn.said)) return null;
  const parts: StatementPart[] = [];
  for (const rule of rulesOf(rules, "statement")) {
    const part = rule.part(turn, parts);
    if (part) parts.push(part);
  }
  const calls = parts.flatMap((p) => p.calls);
  return calls.length ? { lead: parts.find((p) => p.lead !== undefined)?.lead ?? "Let me note that.", calls } : null;
}

/** What the offline model says about a tool result: only what the result says happened. */
export function describeOutcome(o: ToolOutcome, rules: OfflineRules): string {
  for (const rule of rulesOf(rules, "outcome")) {
    const said = rule.say(o);
    if (said !== null) return said;
  }
  return `${o.name ?? "The tool"} ${o.isError ? "failed" : "says"}: ${o.content}`;
}

/** What the plain reply says the model knows, from the prompt. */
export const recallText = (context: string, rules: OfflineRules) =>
  rulesOf(rules, "recall")
    .map((r) => r.say(context))
    .join("");
