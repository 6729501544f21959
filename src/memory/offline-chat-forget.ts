/**
 * The offline model's rule for a request to forget (docs/offline-model.md, rule 5): it records nothing, and asks to
 * forget what it was shown that the request names. The stand-in's English, for the offline chat rules only.
 */
import { clamp } from "../lib/sanitize";
import { withoutSentences } from "../lib/sentences";
import { OFFLINE_NOTICE } from "../model/offline";
import type { OfflinePlan, OfflineTurn, ToolOutcome } from "../model/offline-rule";
import { bestMatches, memoryWords, sharedWords } from "../model/offline-words";
import { forgetMemory } from "./tools";

/**
 * A request to forget ("Please forget that I live in Lyon", "could you forget where I work", "I'd like you to forget
 * that", "please don't remember that"), not "I always forget my keys", "I don't remember my PIN" nor "Forget-me-nots".
 */
const FORGET =
  /(?:^|[.!?]\s+)(?:(?:please|ok|okay|and|so|also|just),?\s+)*(?:forget|stop remembering|(?:don't|do not) (?:remember|save|store|keep))\b(?!-)|\b(?:can|could|would|will) you (?:please )?forget\b(?!-)|\byou (?:can|should|may) forget\b(?!-)|\b(?:want|like|need) you to (?:please )?forget\b(?!-)/i;
/** "Forget it, remember that I live in Lyon": a dismissal, then a request to remember. */
const DISMISS_THEN_REMEMBER = /\bforget (?:it|that|about it)\s*[,;:.!-]?\s+(?:(?:and|but|just|instead|please)\s+)*remember\b/i;

export const asksToForget = (said: string) => FORGET.test(said.trim()) && !DISMISS_THEN_REMEMBER.test(said);

/** The Structured Data JSON (the profile) the turn was shown; none when it is escaped or cut. */
function shownProfile(context: string): Record<string, unknown> {
  try {
    return JSON.parse(/^## Structured Data[^\n]*\n(\{.*\})$/m.exec(context)?.[1] ?? "{}") as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The working-memory narrative the turn was shown (the section the context provider titles so). */
const shownNarrative = (context: string) => /(?:^|\n)## Your Context \(working memory\)\n([\s\S]*?)(?=\n## |$)/.exec(context)?.[1]?.trim() ?? "";

/**
 * What a request to forget names among what the model was shown: recalled facts, profile keys (the Structured
 * Data JSON) and sentences of the working-memory narrative that share a word with it ("forget that I live in
 * Lyon" -> the fact "User lives in Lyon", the key Location: "Lyon", and "They live in Lyon." in the narrative).
 * A fact that is mostly about something else ("User is Ana and lives in Lyon") is not offered, since it would go
 * whole: the lead names it instead. The call waits for the user's approval.
 */
function forgetPlan({ said, offers, context, facts }: OfflineTurn): OfflinePlan | null {
  if (!offers(forgetMemory.name)) return null;
  const asked = memoryWords(said);
  const aboutIt = (text: string) => sharedWords(asked, text) * 2 >= memoryWords(text).size;
  const factIds = bestMatches(
    said,
    facts.filter((f) => aboutIt(f.text)),
  ).map((f) => f.id);
  // Mentioned rather than offered: facts that say all of what was asked, among other things.
  const mixed = facts.filter((f) => !aboutIt(f.text) && asked.size > 0 && sharedWords(asked, f.text) === asked.size);
  const profileKeys = Object.entries(shownProfile(context))
    .filter(([key, value]) => sharedWords(asked, `${key} ${typeof value === "string" ? value : JSON.stringify(value)}`) > 0)
    .map(([key]) => key);
  const narrative = shownNarrative(context);
  const rewritten = withoutSentences(narrative, (s) => sharedWords(asked, s) > 0);
  const rewrite = rewritten !== narrative.trimEnd() ? { working_memory: rewritten } : {};
  const n = factIds.length + profileKeys.length + (rewrite.working_memory === undefined ? 0 : 1);
  if (!n) return null;
  const also = mixed.length
    ? ` ${mixed.length === 1 ? "One fact mentions" : `${mixed.length} facts mention`} it among other things (${mixed.map((f) => `“${f.text}”`).join(", ")}): ` +
      "I left it, since it would go whole; forget it in Memory → Facts if it should."
    : "";
  return {
    lead: `I found ${n} thing${n === 1 ? "" : "s"} in my memory that match${n === 1 ? "es" : ""}; once you approve, I'll forget ${n === 1 ? "it" : "them"}.${also}`,
    calls: [{ name: forgetMemory.name, input: { fact_ids: [...new Set(factIds)], profile_keys: profileKeys, ...rewrite, reason: clamp(said, 500) } }],
  };
}

/** A request to forget: the forget call, or, when nothing shown matches, where a fact is forgotten by hand. */
export function answerForget(turn: OfflineTurn): OfflinePlan | { text: string } | null {
  if (!asksToForget(turn.said)) return null;
  return (
    forgetPlan(turn) ?? {
      text:
        `I couldn't tell what to forget from what I was shown ${OFFLINE_NOTICE}. Name it more precisely, or open Memory → Facts and choose ` +
        "Forget: the earlier values it had replaced go with it.",
    }
  );
}

/** What the model says after a forget call: what the result says, or, denied, that nothing was forgotten. */
export function describeForget(o: ToolOutcome): string | null {
  // The bridge's answer to a denied call (an error result: a successful forget never reads as one).
  if (o.isError) return /\bdenied this tool call\b/i.test(o.content) ? "Understood: I have not forgotten anything." : null;
  return `Done. ${o.content}`;
}
