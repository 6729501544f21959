/**
 * The offline model's rules: which tools a user message calls, and what it says about their results.
 * docs/offline-model.md describes them for users; keep the two in step.
 */
import { clamp } from "../lib/sanitize";
import { thirdPerson } from "../lib/third-person";
import { describeProjectOutcome, projectCall } from "./offline-projects";
import { schemaInstance } from "./schema-instance";

export type ToolDef = { name: string; type?: string; input_schema?: unknown };
export type PlannedCall = { name: string; input: unknown };
export type ToolOutcome = { name: string | undefined; content: string; isError: boolean };

const BRAIN = "update_customer_brain";
const OBSERVE = "record_observation";
const PROFILE = "update_user_context";
const FORGET_TOOL = "forget_memory";
const MEMORY_TOOLS = new Set([BRAIN, OBSERVE, PROFILE, FORGET_TOOL, "search_memory", "update_connection_context"]);

/** A question is never a statement to remember ("Do you remember my name?"). */
export const isQuestion = (said: string) =>
  /\?\s*$/.test(said) || /^(do|does|did|what|what's|who|whom|where|when|why|how|can|could|is|are|am|will|would|should|have|has)\b/i.test(said.trim());

const EXPLICIT = /\b(remember|don't forget|do not forget|note that|keep in mind)\b/i;

/**
 * A request to forget ("Please forget that I live in Lyon", "could you forget where I work", "I'd like you to forget
 * that", "please don't remember that"), not "I always forget my keys", "I don't remember my PIN" nor "Forget-me-nots".
 */
const FORGET =
  /(?:^|[.!?]\s+)(?:(?:please|ok|okay|and|so|also|just),?\s+)*(?:forget|stop remembering|(?:don't|do not) (?:remember|save|store|keep))\b(?!-)|\b(?:can|could|would|will) you (?:please )?forget\b(?!-)|\byou (?:can|should|may) forget\b(?!-)|\b(?:want|like|need) you to (?:please )?forget\b(?!-)/i;
/** "Forget it, remember that I live in Lyon": a dismissal, then a request to remember. */
const DISMISS_THEN_REMEMBER = /\bforget (?:it|that|about it)\s*[,;:.!-]?\s+(?:(?:and|but|just|instead|please)\s+)*remember\b/i;

export const asksToForget = (said: string) => FORGET.test(said.trim()) && !DISMISS_THEN_REMEMBER.test(said);

/**
 * "Call me Bob" names the user; "call me tomorrow", "call me back", "call me Monday", "please call me ASAP" and
 * "don't call me Robert" do not: only a capitalised word in lower case after its first letter, not a day or month.
 */
const CALL_ME =
  /(?<!\b(?:[Dd]on['’]t|[Dd]o not|[Nn]ever)\s)\b[Cc]all me\s+(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|July|August|September|October|November|December)\b)(\p{Lu}\p{Ll}[\p{L}'-]*)/u;

/** Observation categories, first match wins. */
const CATEGORIES: { category: string; when: RegExp }[] = [
  { category: "correction", when: /\b(actually|correction|not anymore|no longer|i was wrong)\b/i },
  { category: "project_details", when: /\b(i'm|i am|we're|we are) (working on|building|launching)\b|\bmy (project|startup|company|app)\b/i },
  { category: "preference", when: /\b(i prefer|i like|i love|i hate|i enjoy|i don't like|i do not like|always|never)\b/i },
  { category: "fact", when: /\b(my name is|i live|i work|i'm|i am|i have|i've|(?:i|we) (?:just )?(?:moved|relocated)|my (?:\w+ ){1,3}(is|are))\b/i },
  { category: "fact", when: CALL_ME },
];

/**
 * "Porto now", "Acme these days", "Berlin last year": the time words say when the value became true or that it is
 * current; they are not part of it.
 */
const WHEN =
  /\s+(?:now|nowadays|these days|at the moment|currently|recently|today|yesterday|(?:last|this) (?:year|month|week|summer|spring|autumn|fall|winter)|(?:a|an|one|two|three|four|five|six|a few|several|\d+) (?:days?|weeks?|months?|years?) ago|in \d{4})$/i;
const clean = (s: string) =>
  s
    .trim()
    .replace(WHEN, "")
    .replace(/[.!\s]+$/, "");
/**
 * Where a profile value ends: punctuation, or a new clause ("... and my dog is called Pixel", "... with my wife",
 * "... since 2019"). A conjunction inside a name ("Trinidad and Tobago", "Johnson and Johnson") does not end it.
 */
const VALUE = String.raw`([^.,;!?]+?)(?=\s+(?:(?:and|but|so|because|while|where|with)\s+(?:i|i'm|i've|i'd|my|we|we're|our|he|she|they|it|it's|the|a|an|his|her|their)\b|since\b|for\s+\d|as\s+an?\s)|\s*[.,;!?]|\s*$)`;
const field = (lead: string) => new RegExp(String.raw`\b${lead}\s+${VALUE}`, "i");
const PROFILE_FIELDS: { key: string; when: RegExp }[] = [
  { key: "Name", when: /\b(?:my name is|i'm called|i am called)\s+([\p{L}][\p{L}'-]*)/iu },
  { key: "Name", when: CALL_ME },
  { key: "Location", when: field("(?:i|we) (?:(?:now |still )?live in|(?:just )?(?:moved|relocated) to)") },
  { key: "Employer", when: field("i work (?:at|for)") },
  { key: "Role", when: field(String.raw`i work (?:(?:at|for) [^.,;!?]+? )?as(?:\s+an?)?`) },
];

/** What a stated fact adds to the structured profile, e.g. "My name is Ana" -> {Name: "Ana"}. */
export function profileUpdates(said: string): Record<string, string> {
  const out: Record<string, string> = {};
  // One space between words and a bounded length keep the lazy value patterns linear (a run of 30,000 spaces
  // took seconds); a profile value is in the first sentences of a message anyway.
  const text = said.replace(/\s+/g, " ").slice(0, 2000);
  for (const f of PROFILE_FIELDS) {
    const m = f.when.exec(text);
    if (m?.[1] && !(f.key in out)) out[f.key] = clean(m[1]);
  }
  return out;
}

/**
 * What MEMORY keeps of "Forget it, remember that I live in Lyon": the statement after the request, about the
 * user ("User lives in Lyon"), not the request itself.
 */
const REQUESTED = /\b(?:please\s+)?(?:remember|don't forget|do not forget|note|keep in mind)(?:\s+that|:|,)\s+(\S.*)$/i;
const memoryEntry = (said: string) => thirdPerson(REQUESTED.exec(said)?.[1] ?? said);

/** Memory calls for a statement: MEMORY when asked to remember, an observation for what was stated, profile keys. */
function memoryCalls(said: string, available: Set<string>): PlannedCall[] {
  // Saving "forget that I live in Lyon" would store the very thing the user asked to drop.
  if (isQuestion(said) || asksToForget(said)) return [];
  const explicit = EXPLICIT.test(said);
  const category = CATEGORIES.find((c) => c.when.test(said))?.category ?? (explicit ? "fact" : undefined);
  if (!category) return [];
  const calls: PlannedCall[] = [];
  if (available.has(BRAIN) && (explicit || !available.has(OBSERVE))) calls.push({ name: BRAIN, input: { target: "memory", content: memoryEntry(said) } });
  if (available.has(OBSERVE)) calls.push({ name: OBSERVE, input: { content: said, category } });
  const profile = profileUpdates(said);
  if (available.has(PROFILE) && Object.keys(profile).length) calls.push({ name: PROFILE, input: { scaffold_updates: profile } });
  return calls;
}

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
function inputFor(tool: ToolDef, said: string): unknown {
  const schema = tool.input_schema ?? { type: "object" };
  const input = schemaInstance(schema);
  if (!input || typeof input !== "object" || Array.isArray(input)) return {};
  const id = /\b([A-Z0-9-]*\d[A-Z0-9-]*)\b/i.exec(said)?.[1];
  const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const first = Object.entries(input).find(([, v]) => v === "")?.[0] ?? Object.entries(props).find(([, p]) => p?.type === "string")?.[0];
  return id && first ? { ...input, [first]: id } : input;
}

/** A tool the user asks for by what it does: the clock, their location, or a declared tool named in the message. */
function askedTool(said: string, tools: ToolDef[]): ToolDef | undefined {
  const callable = tools.filter((t) => !MEMORY_TOOLS.has(t.name) && !t.type);
  if (/\b(what time|the time|what day|what date|today's date)\b/i.test(said)) {
    const clock = callable.find((t) => t.name === "current_time");
    if (clock) return clock;
  }
  if (/\b(where am i|my location|where i am|where are we)\b/i.test(said)) {
    const locate = callable.find((t) => /location|locate|where/i.test(t.name));
    if (locate) return locate;
  }
  const words = new Set(said.toLowerCase().split(/[^a-z0-9]+/));
  return callable.find((t) => t.name !== "current_time" && keywords(t.name).some((k) => words.has(k)));
}

export type Plan = { lead: string; calls: PlannedCall[] } | null;

/** Words that say nothing about which memory a request to forget is about. */
const FORGET_FILLER = new Set(
  "the and that this what where who when which about your you please could would will can should want like need just also okay forget forgetting remember remembering stop don't not save store keep user user's my me i i'm i've we our any all everything anything thing things said told".split(
    " ",
  ),
);
const forgetWords = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .match(/[\p{L}\d'-]{3,}/gu)
      ?.filter((w) => !FORGET_FILLER.has(w)) ?? [],
  );
/** How many of the request's words `text` has. */
const shared = (a: Set<string>, text: string) => [...forgetWords(text)].filter((w) => a.has(w)).length;

/** A fact the model was shown (a recalled memory search result), by id. */
export type ShownFact = { id: string; text: string };

/**
 * The items that share the most of the message's words ("forget that I live in Lyon" and "where do I live?" name
 * "I live in Lyon"; "I live in Lyon" names it rather than "I live with two cats"); none when no item shares one.
 */
export function bestMatches<T extends { text: string }>(said: string, items: readonly T[]): T[] {
  const asked = forgetWords(said);
  const scored = items.map((item) => ({ item, words: shared(asked, item.text) }));
  const most = Math.max(0, ...scored.map((s) => s.words));
  return most ? scored.filter((s) => s.words === most).map((s) => s.item) : [];
}

/**
 * What a request to forget names among what the model was shown: recalled facts and profile keys (the
 * Structured Data JSON) that share a word with it ("forget that I live in Lyon" -> the fact "User lives in Lyon"
 * and the key Location: "Lyon"). The call waits for the user's approval.
 */
function forgetPlan(said: string, tools: ToolDef[], context: string, facts: readonly ShownFact[]): Plan {
  if (!tools.some((t) => t.name === FORGET_TOOL)) return null;
  const asked = forgetWords(said);
  const factIds = bestMatches(said, facts).map((f) => f.id);
  let profile: Record<string, unknown> = {};
  try {
    profile = JSON.parse(/^## Structured Data[^\n]*\n(\{.*\})$/m.exec(context)?.[1] ?? "{}") as Record<string, unknown>;
  } catch {
    // An escaped or cut profile: no keys to offer.
  }
  const profileKeys = Object.entries(profile)
    .filter(([key, value]) => shared(asked, `${key} ${typeof value === "string" ? value : JSON.stringify(value)}`) > 0)
    .map(([key]) => key);
  if (!factIds.length && !profileKeys.length) return null;
  const n = factIds.length + profileKeys.length;
  return {
    lead: `I found ${n} thing${n === 1 ? "" : "s"} in my memory that match${n === 1 ? "es" : ""}; once you approve, I'll forget ${n === 1 ? "it" : "them"}.`,
    calls: [{ name: FORGET_TOOL, input: { fact_ids: [...new Set(factIds)], profile_keys: profileKeys, reason: clamp(said, 500) } }],
  };
}

/**
 * `context`: what the prompt tells the model (the system text and the turn's context), e.g. the user's projects;
 * `facts`: the facts recalled for the turn.
 */
export function planCalls(said: string, tools: ToolDef[], context = "", facts: readonly ShownFact[] = []): Plan {
  if (asksToForget(said)) return forgetPlan(said, tools, context, facts);
  const asked = askedTool(said, tools);
  if (asked)
    return {
      lead: asked.name === "current_time" ? "Let me check the clock." : `Let me use ${asked.name}.`,
      calls: [{ name: asked.name, input: inputFor(asked, said) }],
    };
  const project = isQuestion(said) ? null : projectCall(said, tools, context);
  const memory = memoryCalls(said, new Set(tools.map((t) => t.name)));
  // A statement filed under an existing project is saved there: an observation of it would make a second fact.
  const calls = [...(project?.calls ?? []), ...(project?.fileStatement ? memory.filter((c) => c.name !== OBSERVE) : memory)];
  return calls.length ? { lead: project?.lead ?? "Let me note that.", calls } : null;
}

/** What the offline model says about tool results: only what the results say happened. */
export function describeOutcome(o: ToolOutcome): string {
  // The bridge's answer to a denied call (an error result: a successful forget never reads as one).
  if (o.name === FORGET_TOOL && o.isError && /\bdenied this tool call\b/i.test(o.content)) return "Understood: I have not forgotten anything.";
  if (o.isError) return `${o.name ?? "The tool"} failed: ${o.content}`;
  if (o.name === FORGET_TOOL) return `Done. ${o.content}`;
  const project = describeProjectOutcome(o);
  if (project) return project;
  if (o.name === BRAIN) {
    if (/NOT saved|proposal|awaits|approval/i.test(o.content)) return "I've proposed that for your review: it is not saved until you approve it.";
    if (/nothing changed/i.test(o.content)) return "My memory already says exactly that.";
    if (/\bsaved\b/i.test(o.content)) return "I've saved that to my memory.";
    return `Memory update: ${o.content}`;
  }
  if (o.name === OBSERVE || o.name === PROFILE) {
    if (/budget is used up/i.test(o.content)) return "I've noted that, but today's memory budget is used up: I'll learn it tomorrow.";
    return "I've noted that; it will be part of what I know about you shortly.";
  }
  return `${o.name ?? "The tool"} says: ${o.content}`;
}
