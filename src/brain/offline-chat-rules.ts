/**
 * The offline model's rules for the brain's tool (docs/offline-model.md): MEMORY when the user asks to remember
 * (or when nothing records what they state), what a save's result means, and what MEMORY holds in a plain answer.
 * The stand-in's English, registered through the capability value; nothing on the production path imports it.
 */
import { thirdPerson } from "../lib/third-person";
// How the stand-in reads a statement is memory's: the brain keeps a statement only where no observation can.
import { asksToRemember, observes, statementCategory } from "../memory/offline-chat-statements";
import type { OfflineRules } from "../model/offline-rule";
import { updateCustomerBrain } from "./tool";

/**
 * What MEMORY keeps of "Forget it, remember that I live in Lyon": the statement after the request, about the
 * user ("User lives in Lyon"), not the request itself.
 */
const REQUESTED = /\b(?:please\s+)?(?:remember|don't forget|do not forget|note|keep in mind)(?:\s+that|:|,)\s+(\S.*)$/i;
const memoryEntry = (said: string) => thirdPerson(REQUESTED.exec(said)?.[1] ?? said);

/** The first MEMORY entries the prompt shows (the brain's `<remembered>` section). */
function remembered(system: string): string[] {
  const m = /<remembered>\n([\s\S]*?)\n<\/remembered>/.exec(system);
  return m?.[1]
    ? m[1]
        .split("\n")
        .filter((l) => l.trim() !== "")
        .slice(0, 5)
    : [];
}

export const brainOfflineRules: OfflineRules = {
  tools: [updateCustomerBrain.name],
  rules: [
    {
      stage: "statement",
      priority: 20,
      part: (turn) => {
        // MEMORY keeps what the user asks it to, and stands in for observations where the turn cannot record one.
        const keeps = asksToRemember(turn.said) || !observes(turn);
        if (!keeps || !statementCategory(turn.said) || !turn.offers(updateCustomerBrain.name)) return null;
        return { calls: [{ name: updateCustomerBrain.name, input: { target: "memory", content: memoryEntry(turn.said) } }] };
      },
    },
    {
      stage: "outcome",
      priority: 20,
      say: (o) => {
        if (o.isError || o.name !== updateCustomerBrain.name) return null;
        if (/NOT saved|proposal|awaits|approval/i.test(o.content)) return "I've proposed that for your review: it is not saved until you approve it.";
        if (/nothing changed/i.test(o.content)) return "My memory already says exactly that.";
        if (/\bsaved\b/i.test(o.content)) return "I've saved that to my memory.";
        return `Memory update: ${o.content}`;
      },
    },
    {
      stage: "recall",
      priority: 20,
      say: (system) => {
        const memory = remembered(system);
        return memory.length ? ` Here is what I remember about you:\n${memory.map((l) => `- ${l.replace(/^- /, "")}`).join("\n")}` : "";
      },
    },
  ],
};
