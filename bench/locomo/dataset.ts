/**
 * LoCoMo (snap-research/LoCoMo, data/locomo10.json) read into what the evaluation needs: each conversation's turns
 * as the texts to store, and its questions with the turns that answer them. The file is not in the repository
 * (CC BY-NC 4.0, evaluation only): scripts/eval-locomo.mjs hands it to the test through vitest's `provide`.
 */
import { z } from "zod";

/** LoCoMo's category numbers, named as its task_eval/evaluation.py reads them (the paper lists them in another order). */
export const CATEGORIES = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial" } as const;
export type Category = keyof typeof CATEGORIES;

export type Turn = { diaId: string; session: number; date: string; text: string };
export type Question = {
  /** Position in the conversation's `qa` array: the key of the --json output. */
  index: number;
  question: string;
  category: Category;
  /** The evidence ids that name a turn of this conversation, cleaned (see `evidenceIds`). */
  evidence: string[];
  /** Evidence ids that name no turn even once cleaned: reported, left out of the metrics. */
  unknown: string[];
  /** Published evidence entries `evidenceIds` had to rewrite: reported. */
  repaired: string[];
};
export type Conversation = { number: number; sampleId: string; turns: Turn[]; questions: Question[] };

const RawTurn = z.object({ speaker: z.string(), dia_id: z.string(), text: z.string(), blip_caption: z.string().optional() });
const RawQa = z.object({ question: z.string(), category: z.number().int().min(1).max(5), evidence: z.array(z.string()).default([]) });
export const RawSample = z.object({ sample_id: z.string(), conversation: z.record(z.string(), z.unknown()), qa: z.array(RawQa) });
export type RawSample = z.infer<typeof RawSample>;

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/** "1:56 pm on 8 May, 2023" as an ISO 8601 date-time (UTC: the dataset gives no zone), which engram's metadata.date takes. */
export function sessionDate(text: string): string {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm) on (\d{1,2}) ([A-Za-z]+),? (\d{4})$/.exec(text.trim());
  const month = MONTHS.indexOf(m?.[5]?.toLowerCase() ?? "");
  if (!m || month < 0) throw new Error(`LoCoMo: unreadable session date "${text}"`);
  const hour = (Number(m[1]) % 12) + (m[3] === "pm" ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString();
}

/**
 * The stored text of a turn: its session's date and speaker before the words, and an image's caption the way
 * LoCoMo's own dialog retrieval indexes it (task_eval/gpt_utils.py: `... and shared <blip_caption>`).
 */
export const turnText = (date: string, t: z.infer<typeof RawTurn>) =>
  `[${date}] ${t.speaker}: ${t.text}${t.blip_caption ? ` and shared ${t.blip_caption}` : ""}`;

/**
 * A few evidence entries are malformed in the published file: several ids in one string ("D8:6; D9:17",
 * "D9:1 D4:4"), a stray colon ("D:11:26"), a zero-padded turn ("D30:05"). Cleaned to the ids they plainly mean.
 */
export function evidenceIds(entries: readonly string[]): string[] {
  const ids = entries.flatMap((e) => e.split(/[;,\s]+/)).filter(Boolean);
  return ids.map((id) => id.replace(/^D:/, "D").replace(/^D(\d+):0*(\d+)$/, "D$1:$2"));
}

export function parseConversation(number: number, raw: unknown): Conversation {
  const sample = RawSample.parse(raw);
  const c = sample.conversation;
  const turns: Turn[] = [];
  const sessions = Object.keys(c)
    .map((k) => /^session_(\d+)$/.exec(k)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  for (const s of sessions) {
    const when = z.string().parse(c[`session_${s}_date_time`]);
    const date = sessionDate(when);
    for (const t of z.array(RawTurn).parse(c[`session_${s}`])) turns.push({ diaId: t.dia_id, session: s, date, text: turnText(when, t) });
  }
  const known = new Set(turns.map((t) => t.diaId));
  const questions = sample.qa.map((q, index): Question => {
    const ids = [...new Set(evidenceIds(q.evidence))];
    return {
      index,
      question: q.question,
      category: q.category as Category,
      evidence: ids.filter((id) => known.has(id)),
      unknown: ids.filter((id) => !known.has(id)),
      repaired: q.evidence.filter((e) => !ids.includes(e)),
    };
  });
  return { number, sampleId: sample.sample_id, turns, questions };
}
