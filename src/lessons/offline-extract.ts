/**
 * The offline model's extraction rules (no ANTHROPIC_API_KEY): lessons from the moments in the prompt, by rule.
 * - a `#cor` marker: the correction itself (HIGH);
 * - a human correction: what the developer said to do instead (an antipattern when it says not to);
 * - an error followed by a fix that worked: the error and the action that fixed it (a pattern; HARD-WON after
 *   two or more failures).
 * Deterministic, so the evaluation can score it and the whole path runs without a key.
 */

import { isStopword } from "../memory/offline-terms";
import { words } from "../memory/text";
import type { OfflineRequest } from "../model/offline";
import { offlineWithheldBy } from "../model/offline-sensitive";
import { type ExtractionWire, MOMENTS_CLOSE, MOMENTS_OPEN, neverRememberOf } from "./extraction-schema";
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

/** A title is one short line: longer ones are cut at a clause boundary, else at a word. */
const TITLE_CHARS = 80;

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function shortTitle(text: string): string {
  const line = text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[\s.!;:,]+$/, "");
  if (line.length <= TITLE_CHARS) return capitalise(line);
  const head = line.slice(0, TITLE_CHARS);
  const clause = Math.max(...[", and ", ", but ", ", so ", "; ", " - ", " because ", ", which "].map((b) => head.lastIndexOf(b)));
  if (clause >= 20) return capitalise(head.slice(0, clause).replace(/[\s.!;:,]+$/, ""));
  return `${capitalise(head.slice(0, TITLE_CHARS - 3).replace(/\s+\S*$/, ""))}...`;
}

/** What a correction says before its rule: "No,", "Actually,", "that's the wrong approach:". */
const FRAMING =
  /^(?:(?:no|nope|wait|actually|hmm+|ok(?:ay)?|well|sorry|please|again|instead)\b[,.!:;]*\s*|(?:that's|that is|this is|it's|it is)\s+(?:not\s+)?(?:the\s+|a\s+)?(?:wrong|incorrect|bad|not right|not what i (?:asked|wanted))\b[^:.;!]*[:.;!]+\s*)+/i;
/** A sentence that sets the scene rather than says what to do ("We're on zod 4 in this repo."). */
const SCENE = /^(?:we|we're|we've|i|i'm|i've|it|it's|this|that|that's|these|those|there|there's|you|you're)\b/i;
const RULE_WORD = /\b(?:never|always|don'?t|do not|must|should|only|avoid|use)\b/i;

/**
 * A correction's title: its rule, without the framing around it. The first sentence that says what to do (not
 * one that sets the scene); of "rule: explanation", the rule; of "framing: rule", the rule.
 */
export function correctionTitle(text: string): string {
  const sentences = text
    .replace(/\s+/g, " ")
    .trim()
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.replace(FRAMING, "").trim())
    .filter(Boolean);
  const rule = sentences.find((s) => !SCENE.test(s) || RULE_WORD.test(s)) ?? sentences[0] ?? text;
  const colon = rule.indexOf(": ");
  const head = colon > 0 ? rule.slice(0, colon) : rule;
  const chosen = colon > 0 && head.split(" ").length < 3 ? rule.slice(colon + 2) : head;
  return shortTitle(chosen);
}

/** Gerunds whose imperative the rules below would get wrong. */
const IMPERATIVE: Record<string, string> = {
  using: "use",
  writing: "write",
  quoting: "quote",
  caching: "cache",
  changing: "change",
  arranging: "arrange",
  focusing: "focus",
};
/** Words in -ing that are not verbs ("Something broke", "during the build"). */
const NOT_GERUND = /thing$|^(?:during|morning|evening|ceiling|string|bring)$/;

/** "running" -> "run", "quoting" -> "quote", "adding" -> "add": the imperative of a gerund, by spelling rules. */
export function imperative(gerund: string): string {
  const w = gerund.toLowerCase();
  const known = IMPERATIVE[w];
  if (known) return known;
  const stem = w.slice(0, -3);
  if (stem.length >= 4 && /([b-df-hj-km-rtv-y])\1$/.test(stem)) return stem.slice(0, -1);
  const silentE =
    /(?:[^aeiou](?:at|et|ot|ut|ar|or|ur|ir)|iz|yz|[^aeioul]l|[^aeiou][iu]l|[^n]c|v|u|[^s]s|[^aeiou][aeiou]k|[^aeiou][aeiou]d|[^aeiou][aiu]m|[^aeiou][aiy]p|[^aeiou][iuo]n|[^aeiou][io]b|[rl]g|[^aeiou]ag)$/;
  return silentE.test(stem) ? `${stem}e` : stem;
}

/** Verbs that end the subject of "Quoting every token makes the text literal". */
const LINKING =
  /\s(?:makes?|keeps?|fixe[sd]|fix|stops?|avoids?|lets|means|ensures?|solves?|resolves?|prevents?|gives|turns|works|helps|is|was|should|will|does|did)\b.*$/i;
const INTENT = /^(?:i'll|i will|let me|let's|i'm going to|we need to|you need to|need to)\s+(.+)$/i;

/** What the assistant said it did about an error, as an instruction ("Run the migrations first"); null if it says no action. */
export function fixAction(explained: string): string | null {
  for (const sentence of explained.replace(/\s*\([^)]*\)/g, "").split(/(?<=[.!?])\s+/)) {
    const clauses = sentence.includes(": ") ? [sentence.slice(sentence.indexOf(": ") + 2), sentence] : [sentence];
    for (const clause of clauses) {
      const c = clause.trim().replace(/[.!]+$/, "");
      const gerund = /^([a-z]{3,}ing)\b(.*)$/i.exec(c);
      if (gerund?.[1] && !NOT_GERUND.test(gerund[1].toLowerCase()))
        return capitalise(`${imperative(gerund[1])}${(gerund[2] ?? "").replace(LINKING, "")}`.replace(/[\s,;]+$/, ""));
      const intent = INTENT.exec(c)?.[1];
      if (intent) return capitalise(intent);
    }
  }
  return null;
}

const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 3).replace(/\s+\S*$/, "")}...`);

/** What an error line says, without the labels around it ("Error: ", "error: "). */
const symptomOf = (line: string) => line.replace(/^(?:(?:\w*error|fatal|exception)\s*:\s*)+/i, "").trim();

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
    title: correctionTitle(text),
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
  const symptom = clip(symptomOf(errLine) || errLine, 60);
  const todo = explained ? fixAction(explained.text) : null;
  return {
    type: "pattern",
    signal: "MED",
    flags: failures >= 2 ? ["HARD-WON"] : [],
    title: todo ? `${shortTitle(todo)}${symptom ? ` (fixes: ${symptom})` : ""}` : `Fix for: ${symptom}`,
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
  // What the user never wants remembered is left out, and said so (the stand-in's rule: model/offline-sensitive.ts).
  const never = neverRememberOf(prompt);
  const withheld: ExtractionWire["withheld"] = [];
  const lessons = momentsOfPrompt(prompt)
    .flatMap(offlineLessons)
    .filter((l) => {
      const rule = offlineWithheldBy(never, `${l.title}\n${l.content}`);
      if (rule) withheld.push({ rule });
      return !rule;
    });
  return { lessons, withheld };
}
