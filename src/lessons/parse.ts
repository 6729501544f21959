/**
 * Claude Code transcripts (JSONL, one record a line) to compact events. Records: `user` (the human's text, or
 * `tool_result` blocks), `assistant` (`text`, `tool_use`, `thinking` blocks), `summary`, and bookkeeping
 * (`system`, `file-history-snapshot`, `queue-operation`) that carries no lesson. `isSidechain` marks a
 * sub-agent's thread: its "user" turns are prompts from the main agent, not the human. `isMeta` user records
 * are command caveats Claude Code inserts. Every event's text is redacted here, before it is stored.
 */
import { redactSecrets } from "../lib/redact";

export type TranscriptEvent = {
  kind: "user" | "assistant" | "tool_use" | "tool_result" | "summary";
  text: string;
  tool?: string;
  error?: boolean;
  sidechain?: boolean;
};

/** One event's text is capped (a 2 MB build log teaches no more than its head and tail); the cut is marked. */
export const EVENT_CHARS = 4000;

const HEAD = EVENT_CHARS * 0.6;
const TAIL = EVENT_CHARS * 0.3;

const omitted = (n: number) => `\n[... ${n} characters omitted ...]\n`;

function cap(text: string): string {
  if (text.length <= EVENT_CHARS) return text;
  const head = text.slice(0, HEAD);
  const tail = text.slice(-TAIL);
  return `${head}${omitted(text.length - head.length - tail.length)}${tail}`;
}

/**
 * Redacted, then capped. Redaction reads only what the cap could keep, with a margin of `EVENT_CHARS` on the
 * inner side of the head and of the tail (a secret across the cut is still seen whole), so a 2 MB event costs
 * what a 10 KB one does.
 */
function redactCapped(text: string): string {
  if (text.length <= HEAD + TAIL + 2 * EVENT_CHARS) return cap(redactSecrets(text));
  const head = redactSecrets(text.slice(0, HEAD + EVENT_CHARS)).slice(0, HEAD);
  const tail = redactSecrets(text.slice(-(TAIL + EVENT_CHARS))).slice(-TAIL);
  return `${head}${omitted(text.length - HEAD - TAIL)}${tail}`;
}

type Block = { type?: unknown; text?: unknown; name?: unknown; input?: unknown; content?: unknown; is_error?: unknown };

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((b) => (isRecord(b) && typeof b.text === "string" ? b.text : ""))
      .filter(Boolean)
      .join("\n");
  return "";
}

/** A tool call as one line: the tool and the input field that says what it did. */
function toolUseText(name: string, input: unknown): string {
  if (!isRecord(input)) return name;
  const main = input.command ?? input.file_path ?? input.pattern ?? input.url ?? input.description ?? input.query;
  const extra = typeof input.new_string === "string" ? `\n${input.new_string}` : typeof input.content === "string" ? `\n${input.content}` : "";
  return `${name}${typeof main === "string" ? `: ${main}` : ""}${extra}`;
}

/**
 * Output Claude Code records as a user turn: a command the developer ran in bash mode (`!curl ...`) or a slash
 * command. The developer typed the command, not what it printed, so its output is a tool result.
 */
const COMMAND_OUTPUT = /^\s*<(?:bash-stdout|bash-stderr|local-command-stdout|local-command-stderr)>/;

/** A text block of a `user` or `assistant` record as an event. */
const textEvent = (kind: "user" | "assistant", text: string, sidechain: { sidechain?: true }): TranscriptEvent =>
  kind === "user" && COMMAND_OUTPUT.test(text) ? event({ kind: "tool_result", tool: "command", text, ...sidechain }) : event({ kind, text, ...sidechain });

function event(e: TranscriptEvent): TranscriptEvent {
  return { ...e, text: redactCapped(e.text.trim()) };
}

/** Events of one record; unknown shapes give none. */
export function recordEvents(record: unknown): TranscriptEvent[] {
  if (!isRecord(record)) return [];
  const sidechain: { sidechain?: true } = record.isSidechain === true ? { sidechain: true } : {};
  if (record.type === "summary" && typeof record.summary === "string") return [event({ kind: "summary", text: record.summary })];
  if (record.type !== "user" && record.type !== "assistant") return [];
  if (record.isMeta === true) return [];
  const message = isRecord(record.message) ? record.message : {};
  const content = message.content;
  if (typeof content === "string") {
    return content.trim() ? [textEvent(record.type, content, sidechain)] : [];
  }
  if (!Array.isArray(content)) return [];
  const out: TranscriptEvent[] = [];
  for (const raw of content as Block[]) {
    if (!isRecord(raw)) continue;
    if (raw.type === "text" && typeof raw.text === "string" && raw.text.trim()) out.push(textEvent(record.type, raw.text, sidechain));
    else if (raw.type === "tool_use" && typeof raw.name === "string")
      out.push(event({ kind: "tool_use", tool: raw.name, text: toolUseText(raw.name, raw.input), ...sidechain }));
    else if (raw.type === "tool_result") {
      const text = resultText(raw.content);
      if (text.trim()) out.push(event({ kind: "tool_result", text, ...(raw.is_error === true ? { error: true } : {}), ...sidechain }));
    }
  }
  return out;
}

export type ParsedContent = { events: TranscriptEvent[]; lines: number; unreadable: number };

/** Parses whole JSONL lines; a line that is not JSON is counted and skipped (never fatal). */
export function parseTranscript(content: string): ParsedContent {
  const events: TranscriptEvent[] = [];
  let lines = 0;
  let unreadable = 0;
  for (const line of content.split("\n")) {
    if (!line.trim()) continue;
    lines++;
    try {
      events.push(...recordEvents(JSON.parse(line)));
    } catch {
      unreadable++;
    }
  }
  return { events, lines, unreadable };
}
