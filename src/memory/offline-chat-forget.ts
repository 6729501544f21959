/**
 * The offline model's rule for a request to forget (docs/offline-model.md, rule 5): it records nothing, and asks to
 * forget what it was shown that the request names. The stand-in's English, for the offline chat rules only.
 */
import { clamp } from "../lib/sanitize";
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

/**
 * What a request to forget names among what the model was shown: recalled facts and profile keys (the
 * Structured Data JSON) that share a word with it ("forget that I live in Lyon" -> the fact "User lives in Lyon"
 * and the key Location: "Lyon"). The call waits for the user's approval.
 */
function forgetPlan({ said, offers, context, facts }: OfflineTurn): OfflinePlan | null {
  if (!offers(forgetMemory.name)) return null;
  const asked = memoryWords(said);
  const factIds = bestMatches(said, facts).map((f) => f.id);
  let profile: Record<string, unknown> = {};
  try {
    profile = JSON.parse(/^## Structured Data[^\n]*\n(\{.*\})$/m.exec(context)?.[1] ?? "{}") as Record<string, unknown>;
  } catch {
    // An escaped or cut profile: no keys to offer.
  }
  const profileKeys = Object.entries(profile)
    .filter(([key, value]) => sharedWords(asked, `${key} ${typeof value === "string" ? value : JSON.stringify(value)}`) > 0)
    .map(([key]) => key);
  if (!factIds.length && !profileKeys.length) return null;
  const n = factIds.length + profileKeys.length;
  return {
    lead: `I found ${n} thing${n === 1 ? "" : "s"} in my memory that match${n === 1 ? "es" : ""}; once you approve, I'll forget ${n === 1 ? "it" : "them"}.`,
    calls: [{ name: forgetMemory.name, input: { fact_ids: [...new Set(factIds)], profile_keys: profileKeys, reason: clamp(said, 500) } }],
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
