/**
 * Consolidation without a model (no ANTHROPIC_API_KEY): deterministic rules answer the consolidation
 * structured-output request, so `wrangler dev` offline still builds working memory, scaffold and facts.
 * It rewrites first person into third, files preferences and projects in the scaffold, and keeps the
 * most recent observations in the narrative. Contradictions are left to fact slots (slots.ts).
 */
import type { Json, JsonObject } from "../db/schema";
import { thirdPerson } from "../lib/third-person";
import type { StructuredSkill } from "../model/offline";
import { type ConsolidationOutput, type ConsolidationWire, parseConsolidationPrompt, WORKING_MEMORY_WORDS } from "./consolidation-schema";
import { wordCount } from "./text";

const HEADER = "Recent context (offline consolidation: rule-based, no model):";

function appendUnique(scaffold: JsonObject, key: string, item: string) {
  const list = Array.isArray(scaffold[key]) ? (scaffold[key] as Json[]) : [];
  if (!list.includes(item)) scaffold[key] = [...list, item];
}

/** The domain output as the wire shape the model returns. */
const toWire = (out: ConsolidationOutput): ConsolidationWire => ({
  updated_scaffold: JSON.stringify(out.updated_scaffold),
  scaffold_confidence: [],
  updated_working_memory: out.updated_working_memory,
  facts_to_embed: out.facts_to_embed.map((f) =>
    typeof f === "string"
      ? { text: f, confidence: 0.7, supersedes: [], connection_id: "" }
      : { text: f.text, confidence: f.confidence ?? 0.7, supersedes: f.supersedes ?? [], connection_id: f.connection_id ?? "" },
  ),
});

export const offlineConsolidate: StructuredSkill = (req) => toWire(consolidateByRules(req));

function consolidateByRules(req: Parameters<StructuredSkill>[0]): ConsolidationOutput {
  const first = req.messages[0];
  const text = typeof first?.content === "string" ? first.content : (first?.content ?? []).map((b) => b.text ?? "").join("\n");
  const input = parseConsolidationPrompt(text);
  const out: ConsolidationOutput = { updated_scaffold: {}, updated_working_memory: "", facts_to_embed: [] };
  if (!input) return out;
  const lines = input.working_memory.split("\n").filter((l) => l.trim() && l !== HEADER);
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
        if (typeof value === "string" || typeof value === "number") out.facts_to_embed.push(`User's ${key} is ${value}`);
      }
      lines.push(`- Profile updated: ${Object.keys(parsed).join(", ")}`);
      continue;
    }
    const said = thirdPerson(o.content);
    if (o.type === "preference") appendUnique(out.updated_scaffold, "Preferences", said);
    if (o.type === "project_details") appendUnique(out.updated_scaffold, "Projects", said);
    out.facts_to_embed.push(o.type === "correction" ? { text: said, confidence: 0.9 } : said);
    lines.push(`- ${said}`);
  }
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
