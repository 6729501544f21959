/**
 * Sensitive data the user never wants remembered. A pattern is the user's own literal phrase: it matches text in
 * any case, in any script (compatibility-normalised, Unicode case-insensitive), with no word list behind it. A
 * topic ("health") need not be in the text at all: only a model can judge it, so the extraction and consolidation
 * models receive the topics and say what they withheld. What was withheld is logged in the context log, by kind,
 * rule and where it came from, never with the text itself.
 */
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { contextLogs, type JsonObject, type MemoryKind, type SensitiveRule } from "../db/schema";

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const normalise = (s: string) => s.normalize("NFKC");

/** The first of the user's patterns the text contains, or null. Topics are not matched here (see above). */
export function matchedPattern(rules: readonly SensitiveRule[], ...texts: string[]): SensitiveRule | null {
  for (const rule of rules) {
    if (rule.kind !== "pattern") continue;
    const re = new RegExp(escapeRegExp(normalise(rule.text)), "iu");
    if (texts.some((t) => re.test(normalise(t)))) return rule;
  }
  return null;
}

/**
 * The first pattern a whole-document replacement adds: one the new text holds and the current text does not. Text
 * written before the rule existed does not block every later update of the document (the user edits that out).
 */
export const addedPattern = (rules: readonly SensitiveRule[], before: string, after: string): SensitiveRule | null =>
  matchedPattern(
    rules.filter((r) => !matchedPattern([r], before)),
    after,
  );

/** What a model is told when a write was withheld: it must not say it will remember it. */
export const WITHHELD_NOTE = "Not saved: it holds something the user asked never to remember. Do not say you will remember it.";

export const topics = (rules: readonly SensitiveRule[]) => rules.filter((r) => r.kind === "topic").map((r) => r.text);

/** Every pattern and topic, as the lists a model is given (it judges topics; patterns it may catch in other wording). */
export const neverRemember = (rules: readonly SensitiveRule[]) => rules.map((r) => `${r.kind}: ${r.text}`);

/** One thing not remembered: which kind of memory, which rule (or consent mode) kept it out, and through which path. */
export type Withheld = {
  kind: MemoryKind;
  /** `pattern` / `topic`: a sensitive rule; `consent`: the kind's mode is off, or ask had no one to ask. */
  why: "pattern" | "topic" | "consent";
  /** The rule's text (the user's own), or the mode. */
  rule: string;
  /** chat, mcp, api, consolidation, extraction. */
  via: string;
  /** What was withheld, without its text: e.g. "observation", "fact", "lesson", "soul". */
  what: string;
  /** Ids that name it without saying it (an observation id). */
  ref?: string;
};

/**
 * A context-log row that records only what was withheld (`injected.withheld`); in a chat turn it carries the
 * session, so the turn's log shows it beside what the turn was shown.
 */
export function withheldLogInsert(db: Db, userId: string, sessionId: string | null, items: readonly Withheld[]) {
  const withheld = items.map((w) => ({ ...w }) as JsonObject);
  return db.insert(contextLogs).values({ id: newId("ctx"), userId, sessionId, injected: { withheld }, createdAt: Date.now() });
}

export async function logWithheld(db: Db, userId: string, sessionId: string | null, items: readonly Withheld[]): Promise<void> {
  if (items.length) await withheldLogInsert(db, userId, sessionId, items);
}
