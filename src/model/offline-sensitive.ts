/**
 * The offline model's stand-in for judging sensitive topics (consolidation and lesson extraction without a model). Claude judges a topic
 * in any language and wording; this rule knows a few English topics by words that often go with them, and
 * otherwise only the topic's own word. It is the labelled stand-in: the production path takes the model's word.
 */
const RELATED: Record<string, readonly string[]> = {
  health: ["doctor", "diagnos", "illness", "ill", "sick", "disease", "medication", "medicine", "therapy", "therapist", "hospital", "symptom", "surgery"],
  money: ["salary", "debt", "loan", "mortgage", "bank account", "income"],
  religion: ["church", "mosque", "synagogue", "temple", "prayer", "faith"],
  politics: ["vote", "voted", "election", "party member"],
  family: ["mother", "father", "sister", "brother", "divorce", "wife", "husband"],
};

/** The `never_remember` entry ("topic: health") an observation concerns, by the stand-in's rule, or null. */
export function offlineWithheldBy(entries: readonly string[], text: string): string | null {
  for (const entry of entries) {
    const [kind, ...rest] = entry.split(": ");
    const subject = rest.join(": ").toLowerCase();
    if (!subject) continue;
    const words = kind === "topic" ? [subject, ...(RELATED[subject] ?? [])] : [subject];
    // A word, or the start of one ("diagnos" in "diagnosed"), in any case.
    if (words.some((w) => new RegExp(`(?<![\\p{L}\\p{N}])${w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "iu").test(text))) return entry;
  }
  return null;
}
