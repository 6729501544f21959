/**
 * The offline model's extraction rules (no ANTHROPIC_API_KEY): lessons from the moments in the prompt, by rule.
 * - a `#cor` marker: the correction itself (HIGH);
 * - a human correction: what the developer said to do instead (an antipattern when it says not to);
 * - an error followed by a fix that worked: the error and the action that fixed it (a pattern; HARD-WON after
 *   two or more failures).
 * Deterministic, so the evaluation can score it and the whole path runs without a key.
 */

import { isStopword, words } from "../memory/text";
import type { OfflineRequest } from "../model/offline";
import { type ExtractionWire, MOMENTS_CLOSE, MOMENTS_OPEN } from "./extraction-schema";
import type { TranscriptEvent } from "./parse";
import { COR_MARKER, corTexts, signalsOf } from "./signals";

type WireLesson = ExtractionWire["lessons"][number];

const KIND_OF: Record<string, TranscriptEvent["kind"]> = {
  USER: "user",
  ASSISTANT: "assistant",
  "TOOL CALL": "tool_use",
  "TOOL RESULT": "tool_result",
  SUMMARY: "summary",
};

/** The moments of a prompt back as events (labels as `signals.ts` renders them). */
export function momentsOfPrompt(prompt: string): TranscriptEvent[][] {
  const start = prompt.indexOf(MOMENTS_OPEN);
  const end = prompt.lastIndexOf(MOMENTS_CLOSE);
  if (start < 0 || end < start) return [];
  const body = prompt.slice(start + MOMENTS_OPEN.length, end);
  const out: TranscriptEvent[][] = [];
  for (const m of body.matchAll(/<moment [^>]*>\n([\s\S]*?)\n<\/moment>/g)) {
    const events: TranscriptEvent[] = [];
    for (const line of (m[1] ?? "").split("\n")) {
      const head = /^\[(SUBAGENT )?(USER|ASSISTANT|TOOL CALL|TOOL RESULT|SUMMARY)( \(failed\))?\] ?(.*)$/.exec(line);
      const kind = head ? KIND_OF[head[2] ?? ""] : undefined;
      if (head && kind) events.push({ kind, text: head[4] ?? "", ...(head[3] ? { error: true } : {}), ...(head[1] ? { sidechain: true } : {}) });
      else {
        const last = events.at(-1);
        if (last) last.text += `\n${line}`;
      }
    }
    out.push(events);
  }
  return out;
}

const sentence = (text: string, max = 160) => {
  const first = (text.split(/(?<=[.!?])\s|\n/)[0] ?? text).trim();
  return first.length > max ? `${first.slice(0, max - 3)}...` : first;
};

/** The first sentences of a text, up to `max` characters (cut at a sentence end when there is one). */
const sentences = (text: string, max = 300) => {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const end = Math.max(cut.lastIndexOf(". "), cut.lastIndexOf("! "), cut.lastIndexOf("? "));
  return end > max / 3 ? cut.slice(0, end + 1) : `${cut.slice(0, max - 3)}...`;
};

const TAGGABLE = /^[a-z][a-z0-9.+#-]{2,30}$/;
function tagsOf(text: string): string[] {
  const counts = new Map<string, number>();
  for (const w of words(text)) if (!isStopword(w) && TAGGABLE.test(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([w]) => w);
}

const NEGATIVE = /\b(?:don'?t|do not|never|not|stop|avoid|instead of|rather than)\b/i;
const PROJECT_HINT = /\b(?:in this (?:repo|project|codebase)|here we|our (?:repo|codebase|ci)|we (?:always|never|use))\b/i;

function correctionLesson(said: string, before: TranscriptEvent | undefined): WireLesson {
  const text = said.replace(COR_MARKER, "").trim();
  const context = before ? ` (Correcting: ${sentence(before.text, 140)})` : "";
  return {
    type: NEGATIVE.test(text) ? "antipattern" : "lesson",
    signal: "HIGH",
    flags: NEGATIVE.test(text) ? ["AVOID"] : [],
    title: sentence(text, 120),
    content: `${text}${context}`.slice(0, 3000),
    tags: tagsOf(text),
    scope: PROJECT_HINT.test(text) ? "project" : "global",
  };
}

/** The error and what fixed it: the assistant's last explanation and the last command before the completion. */
function fixLesson(events: readonly TranscriptEvent[], errorAt: number, doneAt: number): WireLesson | null {
  const error = events[errorAt];
  const between = events.slice(errorAt + 1, doneAt);
  const explained = between.filter((e) => e.kind === "assistant").at(-1);
  const action = between.filter((e) => e.kind === "tool_use").at(-1);
  if (!error || (!explained && !action)) return null;
  const failures = events.slice(0, doneAt).filter((e) => signalsOf(e).includes("error")).length;
  const errLine = (error.text.split("\n").find((l) => /error|fail|exception|denied|not found/i.test(l)) ?? error.text.split("\n")[0] ?? "")
    .trim()
    .slice(0, 160);
  const fix = [explained ? sentences(explained.text) : "", action ? `(${sentence(action.text, 200)})` : ""].filter(Boolean).join(" ");
  return {
    type: "pattern",
    signal: "MED",
    flags: failures >= 2 ? ["HARD-WON"] : [],
    title: `Fix for: ${errLine}`.slice(0, 200),
    content: `When this fails with "${errLine}", what worked: ${fix}`,
    tags: tagsOf(`${error.text} ${fix}`),
    scope: "project",
  };
}

export function offlineLessons(events: readonly TranscriptEvent[]): WireLesson[] {
  const out: WireLesson[] = [];
  let lastError = -1;
  events.forEach((e, i) => {
    const kinds = signalsOf(e);
    if (kinds.includes("cor")) for (const c of corTexts(e.text)) out.push({ ...correctionLesson(c, events[i - 1]), flags: ["HARD-WON"] });
    else if (kinds.includes("correction")) out.push(correctionLesson(e.text, events[i - 1]));
    // A correction after an error already says what to do: no separate error -> fix lesson.
    if (kinds.includes("cor") || kinds.includes("correction")) lastError = -1;
    if (kinds.includes("error")) lastError = i;
    else if (kinds.includes("completion") && lastError >= 0) {
      const fix = fixLesson(events, lastError, i);
      if (fix) out.push(fix);
      lastError = -1;
    }
  });
  return out;
}

/** The structured-output skill for the offline model: `{lessons}` from the prompt's moments. */
export function offlineExtract(req: OfflineRequest): ExtractionWire {
  const last = req.messages.at(-1)?.content;
  const prompt = typeof last === "string" ? last : (last ?? []).map((b) => b.text ?? "").join("\n");
  return { lessons: momentsOfPrompt(prompt).flatMap(offlineLessons) };
}
