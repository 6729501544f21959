/**
 * Contradiction detection without a model: a fact's slot names what it is about ("user|live_in",
 * "default jira project|is"). A newer fact with the same slot and scope supersedes the older one.
 * Deliberately conservative: only attribute-like statements get a slot ("User's name is X", "X lives in Y");
 * "Python is fun" does not, so liking two things never erases one of them.
 */
import { contentTerms, words } from "./text";

const RELATIONS: [RegExp, string][] = [
  [/\b(?:live|lives|living|lived|reside|resides|residing|moved|moves|relocated|based|settled)\s+(?:in|to|at|near)\b/, "live_in"],
  [/\b(?:work|works|working|worked|employed)\s+(?:at|for)\b/, "work_at"],
  [/\b(?:joined|hired by)\b/, "work_at"],
];

const COPULA = /^(.+?)\s+(?:is|are|was|were|has become|is now|changed to)\s+(.+)$|^(.+?)\s*[:=]\s+(.+)$/;
const PREPOSITIONS = new Set(["in", "on", "at", "by", "for", "with", "to", "from", "of", "until"]);
const POSSESSIVE = /\b(?:my|user's|users'|the user's|their|his|her)\b|'s\b/;

export function slotOf(text: string): string | null {
  const lower = text
    .toLowerCase()
    .replace(/[.!?]+$/, "")
    .trim();
  for (const [re, relation] of RELATIONS) {
    const m = re.exec(lower);
    if (m) return `${contentTerms(lower.slice(0, m.index)).join(" ") || "user"}|${relation}`;
  }
  const m = COPULA.exec(lower);
  if (!m) return null;
  const subjectText = m[1] ?? m[3] ?? "";
  const predicate = words(m[2] ?? m[4] ?? "");
  const subject = contentTerms(subjectText);
  if (subject.length === 0 || (subject.length < 2 && !POSSESSIVE.test(subjectText))) return null;
  // "is due in March" and "is written in Rust" are different attributes of the same subject.
  const [first, second] = predicate;
  const qualifier = first && second && PREPOSITIONS.has(second) && !PREPOSITIONS.has(first) ? ` ${contentTerms(first).join("")}` : "";
  return `${subject.join(" ")}|is${qualifier}`;
}
