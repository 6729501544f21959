/**
 * Consolidation without a model (no ANTHROPIC_API_KEY): deterministic rules answer the consolidation
 * structured-output request, so `wrangler dev` offline still builds working memory, scaffold and facts.
 * It rewrites first person into third, files preferences and projects in the scaffold, and keeps the
 * most recent observations in the narrative. A fact that states a changing attribute gets a key by the stand-in's own
 * rules (offline-keys.ts), and supersedes the related facts that state the same attribute without one, as Claude is
 * asked to; the key does the rest when the facts are written.
 * One statement is one fact: the offline chat model records "I live in Lisbon" as an observation and as the
 * profile key Location, and only the observation becomes a fact.
 */
import type { Json, JsonObject } from "../db/schema";
import { wordCount } from "../lib/text";
import { thirdPerson } from "../lib/third-person";
import type { StructuredSkill } from "../model/offline";
import { offlineWithheldBy } from "../model/offline-sensitive";
import {
  type ConsolidationInput,
  type ConsolidationOutput,
  type ConsolidationWire,
  type FactItem,
  parseConsolidationPrompt,
  WORKING_MEMORY_WORDS,
} from "./consolidation-schema";
import { profileKey, statementKey } from "./offline-keys";

const HEADER = "Recent context (offline consolidation: rule-based, no model):";

function appendUnique(scaffold: JsonObject, key: string, item: string) {
  const list = Array.isArray(scaffold[key]) ? (scaffold[key] as Json[]) : [];
  if (!list.includes(item)) scaffold[key] = [...list, item];
}

/**
 * A profile key as a fact, worded as the statement it comes from would be ("User lives in Lisbon"), so that a key
 * consolidated after its statement (another batch) restates that fact (same text, same fact) instead of adding one.
 */
const PROFILE_FACTS: Record<string, (value: string) => string> = {
  Name: (v) => `User's name is ${v}`,
  Location: (v) => `User lives in ${v}`,
  Employer: (v) => `User works at ${v}`,
  Role: (v) => `User works as ${/^(?:an?|the)\s/i.test(v) ? v : `${/^[aeiou]/i.test(v) ? "an" : "a"} ${v}`}`,
};

function profileFact(key: string, value: string): string {
  const known = PROFILE_FACTS[key];
  if (known) return known(value);
  const name = key.replace(/_/g, " ");
  // "Favourite_colour" -> "favourite colour"; a name with capitals inside ("GitHub") keeps them.
  return `User's ${/^[A-Z]?[a-z ]*$/.test(name) ? name.toLowerCase() : name} is ${value}`;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** True when one of the statements says `value` (as whole words, any case). */
const stated = (value: string, statements: readonly string[]) => {
  const re = new RegExp(`(?:^|[^\\p{L}\\p{N}])${escapeRegExp(value.trim())}(?:$|[^\\p{L}\\p{N}])`, "iu");
  return value.trim() !== "" && statements.some((s) => re.test(s));
};

/** A keyed fact replaces the related facts that state its attribute without a key (written before keys, or verbatim). */
function replacing(f: FactItem, related: ConsolidationInput["related_facts"]): FactItem {
  if (typeof f === "string" || !f.key) return f;
  const ids = related.filter((r) => !r.key && statementKey(r.text) === f.key).map((r) => r.id);
  return ids.length ? { ...f, supersedes: ids } : f;
}

/** The domain output as the wire shape the model returns. */
const toWire = (out: ConsolidationOutput): ConsolidationWire => ({
  updated_scaffold: JSON.stringify(out.updated_scaffold),
  scaffold_confidence: [],
  updated_working_memory: out.updated_working_memory,
  facts_to_embed: out.facts_to_embed.map((f) =>
    typeof f === "string"
      ? { text: f, confidence: 0.7, supersedes: [], connection_id: "", key: "" }
      : { text: f.text, confidence: f.confidence ?? 0.7, supersedes: f.supersedes ?? [], connection_id: f.connection_id ?? "", key: f.key ?? "" },
  ),
  withheld: out.withheld,
});

export const offlineConsolidate: StructuredSkill = (req) => toWire(consolidateByRules(req));

function consolidateByRules(req: Parameters<StructuredSkill>[0]): ConsolidationOutput {
  const first = req.messages[0];
  const text = typeof first?.content === "string" ? first.content : (first?.content ?? []).map((b) => b.text ?? "").join("\n");
  const input = parseConsolidationPrompt(text);
  const out: ConsolidationOutput = { updated_scaffold: {}, updated_working_memory: "", facts_to_embed: [], withheld: [] };
  if (!input) return out;
  // What the user never wants remembered is left out whole, and said so (the stand-in's rule: offline-sensitive.ts).
  const never = input.never_remember ?? [];
  input.observations = input.observations.filter((o) => {
    const rule = offlineWithheldBy(never, o.content);
    if (rule) out.withheld.push({ observation_id: o.id, rule });
    return !rule;
  });
  const lines = input.working_memory.split("\n").filter((l) => l.trim() && l !== HEADER);
  // Statements about the user as their facts read ("User's name is Ana ..."), not "Call them Bob": those say a key.
  const statements = input.observations
    .filter((o) => o.type !== "scaffold_update")
    .map((o) => thirdPerson(o.content))
    .filter((t) => /^User\b/.test(t));
  for (const o of input.observations) {
    let parsed: unknown = null;
    try {
      parsed = o.type === "scaffold_update" ? JSON.parse(o.content) : null;
    } catch {
      parsed = null;
    }
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      for (const [key, value] of Object.entries(parsed as JsonObject)) {
        out.updated_scaffold[key] = value;
        // The statement the key came from, in this batch, is already a fact.
        if ((typeof value === "string" || typeof value === "number") && !stated(String(value), statements))
          out.facts_to_embed.push({ text: profileFact(key, String(value)), key: profileKey(key) });
      }
      lines.push(`- Profile updated: ${Object.keys(parsed).join(", ")}`);
      continue;
    }
    const said = thirdPerson(o.content);
    if (o.type === "preference") appendUnique(out.updated_scaffold, "Preferences", said);
    if (o.type === "project_details") appendUnique(out.updated_scaffold, "Projects", said);
    const key = statementKey(said);
    out.facts_to_embed.push({ text: said, ...(o.type === "correction" ? { confidence: 0.9 } : {}), ...(key ? { key } : {}) });
    lines.push(`- ${said}`);
  }
  out.facts_to_embed = out.facts_to_embed.map((f) => replacing(f, input.related_facts));
  // Newest lines win: drop the oldest until the narrative fits.
  while (lines.length > 1 && wordCount([HEADER, ...lines].join("\n")) > WORKING_MEMORY_WORDS) lines.shift();
  out.updated_working_memory = [HEADER, ...lines].join("\n");
  const current = input.scaffold;
  for (const key of ["Preferences", "Projects"]) {
    const added = out.updated_scaffold[key];
    const before = current[key];
    if (Array.isArray(added) && Array.isArray(before)) out.updated_scaffold[key] = [...before, ...added.filter((a) => !before.includes(a))];
  }
  return out;
}
