/**
 * The signal filter: most of a session is noise, so only its high-signal moments go to the model. A moment
 * is a signal event with a little context around it (what was tried before an error, what fixed it after):
 * - `error`: a failed tool result, or a stack trace / failing test output anywhere;
 * - `correction`: the human redirecting the assistant ("no, use X", "don't ...", "actually ...");
 * - `completion`: the human or the assistant saying the task now works (closes an error -> fix pair);
 * - `cor`: a `#cor` marker, the human's explicit "remember this correction": always kept.
 * Moments are then packed into chunks for the model; a chunk never cuts a moment, and every moment is sent.
 */
import { escapePromptText } from "../lib/prompt-text";
import type { TranscriptEvent } from "./parse";

export type SignalKind = "error" | "correction" | "completion" | "cor";

export type Moment = { kinds: SignalKind[]; events: TranscriptEvent[]; cor: string[] };

export const COR_MARKER = /#cor\b/i;
const COR_MARKERS = new RegExp(COR_MARKER.source, "gi");

/**
 * The developer's own words: a user turn of the main thread. Not a tool result (a command's output, a file, a
 * fetched web page), nor a sub-agent's "user" turn (the main agent prompting it). Only these carry `#cor` and
 * corrections.
 */
export const isHuman = (e: TranscriptEvent) => e.kind === "user" && !e.sidechain;

// Long patterns are written in parts (String.raw keeps each part's backslashes as a regular expression literal would).
const STACK_TRACE = new RegExp(
  String.raw`Traceback \(most recent call last\)|^\s+at \S.*[(:]\S+:\d+(?::\d+)?\)?$|\b\w*(?:Error|Exception): \S|npm ERR!|` +
    String.raw`\bFAIL(?:ED)?\b|exit(?:ed with)? code [1-9]|panicked at|Segmentation fault|command not found|\bE\d{4}\b|error TS\d+|ERR_[A-Z_]+`,
  "m",
);
const CORRECTION = new RegExp(
  String.raw`^(?:no\b|nope\b|wrong\b|stop\b|don'?t\b|do not\b|never\b|not like that|that'?s (?:not|wrong)|actually\b|instead\b|wait\b|` +
    String.raw`please don'?t|you (?:should(?:n'?t)?|need to|must|forgot)|why did you)|\b(?:use \S+(?: \S+){0,3} (?:instead|not)|` +
    String.raw`instead of|rather than|we (?:always|never|don'?t)|that broke|you broke|revert that)\b`,
  "i",
);
const COMPLETION = new RegExp(
  String.raw`\b(?:(?:all )?tests? (?:now )?pass(?:es|ing)?|works now|that works|that fixed it|fixed it|it works|lgtm|looks good|perfect|` +
    String.raw`ship it|build (?:is )?green|green now)\b`,
  "i",
);

/** The signal kinds of one event. */
export function signalsOf(e: TranscriptEvent): SignalKind[] {
  const kinds: SignalKind[] = [];
  const human = isHuman(e);
  if (human && COR_MARKER.test(e.text)) kinds.push("cor");
  if ((e.kind === "tool_result" && e.error) || ((e.kind === "tool_result" || e.kind === "assistant") && STACK_TRACE.test(e.text))) kinds.push("error");
  if (human && CORRECTION.test(e.text.trim())) kinds.push("correction");
  if ((human || e.kind === "assistant") && COMPLETION.test(e.text)) kinds.push("completion");
  return kinds;
}

/** The `#cor` corrections of a human message, each from its marker to the end of its paragraph. */
export function corTexts(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(/\n\s*\n/)) {
    const at = part.search(COR_MARKER);
    if (at < 0) continue;
    const said = part
      .slice(at)
      .replace(COR_MARKER, "")
      .replace(/^[\s:,-]+/, "")
      .trim();
    if (said) out.push(said);
  }
  return out;
}

const BEFORE = 2;
const AFTER = 3;

/** Signal events with their context; overlapping windows merge into one moment. */
export function findMoments(events: readonly TranscriptEvent[]): Moment[] {
  const moments: Moment[] = [];
  let current: { from: number; to: number; kinds: Set<SignalKind> } | null = null;
  const flush = () => {
    if (!current) return;
    const slice = events.slice(current.from, current.to + 1);
    const cor = slice.flatMap((e) => (isHuman(e) ? corTexts(e.text) : []));
    moments.push({ kinds: [...current.kinds], events: slice, cor });
    current = null;
  };
  events.forEach((e, i) => {
    const kinds = signalsOf(e);
    // A completion alone (no error or correction near it) is a pleasantry, not a lesson.
    if (!kinds.length || (kinds.length === 1 && kinds[0] === "completion" && !current)) return;
    const from = Math.max(0, i - BEFORE);
    const to = Math.min(events.length - 1, i + AFTER);
    if (current && from <= current.to + 1) {
      current.to = Math.max(current.to, to);
      for (const k of kinds) current.kinds.add(k);
    } else {
      flush();
      current = { from, to, kinds: new Set(kinds) };
    }
  });
  flush();
  return moments;
}

const LABEL: Record<TranscriptEvent["kind"], string> = {
  user: "USER",
  assistant: "ASSISTANT",
  tool_use: "TOOL CALL",
  tool_result: "TOOL RESULT",
  summary: "SUMMARY",
};

/**
 * An event's text as the model reads it: escaped, so no line of it reads as another event (`[USER] ...`) and no
 * tag closes the moment; outside the developer's own words a `#cor` is escaped too, shown as text, not a marker.
 */
function eventText(e: TranscriptEvent): string {
  const text = escapePromptText(e.text);
  return isHuman(e) ? text : text.replace(COR_MARKERS, "\\$&");
}

export function renderMoment(m: Moment, index: number): string {
  const lines = m.events.map((e) => {
    const label = `${e.sidechain ? "SUBAGENT " : ""}${LABEL[e.kind]}${e.error ? " (failed)" : ""}`;
    return `[${label}] ${eventText(e)}`;
  });
  return `<moment n="${index + 1}" signals="${m.kinds.join(",")}">\n${lines.join("\n")}\n</moment>`;
}

/** A moment longer than `maxChars` (a long error storm) split at event boundaries; an event is at most EVENT_CHARS. */
function splitMoment(m: Moment, maxChars: number): Moment[] {
  const parts: Moment[] = [];
  let events: TranscriptEvent[] = [];
  let size = 0;
  for (const e of m.events) {
    const n = e.text.length + 40;
    if (events.length && size + n > maxChars) {
      parts.push({ kinds: m.kinds, events, cor: [] });
      events = [];
      size = 0;
    }
    events.push(e);
    size += n;
  }
  if (events.length) parts.push({ kinds: m.kinds, events, cor: [] });
  // The #cor texts travel with the first part; each part renders its own events.
  const [first] = parts;
  if (first) first.cor = m.cor;
  return parts;
}

/** Rendered moments packed into chunks of at most about `maxChars` each; every event is sent, none is cut. */
export function chunkMoments(moments: readonly Moment[], maxChars: number): { text: string; moments: Moment[] }[] {
  const chunks: { text: string; moments: Moment[] }[] = [];
  let texts: string[] = [];
  let members: Moment[] = [];
  let size = 0;
  moments
    .flatMap((m) => splitMoment(m, maxChars))
    .forEach((m, i) => {
      const text = renderMoment(m, i);
      if (texts.length && size + text.length > maxChars) {
        chunks.push({ text: texts.join("\n\n"), moments: members });
        texts = [];
        members = [];
        size = 0;
      }
      texts.push(text);
      members.push(m);
      size += text.length + 2;
    });
  if (texts.length) chunks.push({ text: texts.join("\n\n"), moments: members });
  return chunks;
}
