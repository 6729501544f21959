/**
 * The system prompt's account of what the model may remember, so it never promises to remember what the user's
 * consent forbids. Stable (it changes only when the user changes the setting), so it sits in the cached prompt.
 * The user's rules are untrusted text: each is one escaped line of a list, and prompt assembly escapes the body.
 */
import type { Db } from "../db/client";
import { MEMORY_KINDS } from "../db/schema";
import { inlinePromptText } from "../lib/prompt-text";
import { type Consent, KIND_LABEL, readConsent } from "./settings";

export const CONSENT_SECTION = "consent";

const MODE_TEXT = {
  auto: "you may save it when it is worth remembering",
  ask: "every save waits for the user's approval; until they approve, it is not saved, so say it awaits their approval",
  off: "the user turned it off: you cannot save it, so never say you will remember it",
} as const;

/** The section's text, or null when the user kept every default (the prompt is then as it always was). */
export function consentText(c: Consent): string | null {
  const changed = MEMORY_KINDS.filter((k) => c.modes[k] !== "auto");
  if (!changed.length && !c.sensitive.length) return null;
  const lines = ["The user decides what you may remember:", ...MEMORY_KINDS.map((k) => `- ${KIND_LABEL[k]}: ${c.modes[k]}: ${MODE_TEXT[c.modes[k]]}.`)];
  if (c.sensitive.length) {
    lines.push(
      "Never save anything about these topics, or containing these phrases, in any language, by any tool; if the user",
      "shares such things, do not record them and do not promise to remember them (engram withholds them anyway):",
      ...c.sensitive.map((r) => `- ${r.kind}: ${inlinePromptText(r.text)}`),
    );
  }
  return lines.join("\n");
}

/**
 * A context provider (core/context.ts's shape; the composition root registers it). A chat turn reads the consent in
 * its one batch of reads before the model call (`consent`); without it, the provider reads it.
 */
export const consentContextProvider = {
  name: CONSENT_SECTION,
  async build(ctx: { db: Db; userId: string; consent?: Promise<Consent> }) {
    const body = consentText(await (ctx.consent ?? readConsent(ctx.db, ctx.userId)));
    return body ? { name: CONSENT_SECTION, title: "What you may remember", body, stable: true } : null;
  },
};
