/**
 * Escaping for untrusted text placed inside a prompt's structure: the chat prompt's sections (working memory,
 * SOUL, BIBLE, facts, projects), the moments of a transcript sent for lesson extraction, the observations sent
 * for consolidation, and tool results returned to an MCP client's model. A prompt's structure is Markdown headers
 * (`## SOUL ...`), XML-like tags (`<turn_context>`, `<moments>`, `<memory_input>`), code fences and speaker lines
 * (`Human:`, `[USER]`); a body must not be able to produce any of them, nor hide text from the reader. Escaping
 * keeps the text readable: a backslash before a line that would be structure, `‹` for a `<` that opens a tag,
 * and a fence the text left open closed at its end.
 */
import { INVISIBLE_CHARS, stripInvisible } from "./sanitize";

/** A line that Markdown reads as a header: ATX (`## x`, indented or not) or a setext underline (`===`, `---`). */
const HEADER_LINE = /^([ \t]*)(#{1,6}(?=[ \t]|$)|=+[ \t]*$|-+[ \t]*$)/gm;
/** Who speaks in a transcript or a prompt's rendering of one. */
const ROLE = "human|assistant|system|user|developer|tool";
/**
 * A line that reads as a speaker turn: `Human:`, `System:` (a transcript), or a bracketed label as lesson
 * extraction renders events (`[USER]`, `[TOOL RESULT]`, `[SUBAGENT ASSISTANT (failed)]`).
 */
const SPEAKER_LINE = new RegExp(String.raw`^([ \t]*)((?:${ROLE})[ \t]*:|\[(?:subagent[ \t]+)?(?:${ROLE}|summary)\b[^\]\n]{0,40}\])`, "gim");
/** `<` opening a tag-like run (`</remembered>`, `<system>`, `<!--`). */
const TAG_OPEN = /<(?=\/?[A-Za-z!?])/g;
/** A code fence line: three or more backticks or tildes, however indented (a model is laxer than CommonMark). */
const FENCE = /^[ \t]*(`{3,}|~{3,})/;

/**
 * The text with a code fence it opened and never closed closed at its end: an open fence would turn every later
 * part of the prompt (the next sections, the closing tags) into code.
 */
function closeFences(text: string): string {
  let open: string | null = null;
  for (const line of text.split("\n")) {
    const fence = FENCE.exec(line)?.[1];
    if (!fence) continue;
    if (open === null) open = fence;
    // A fence closes with the same character, at least as many of them, and nothing after.
    else if (fence[0] === open[0] && fence.length >= open.length && line.trim() === fence) open = null;
  }
  return open === null ? text : `${text}\n${open}`;
}

/** Invisible characters out (they hide text from whoever reads the prompt); tags, headers and speaker lines escaped. */
const escapeMarkup = (text: string) => stripInvisible(text).replace(TAG_OPEN, "‹").replace(HEADER_LINE, "$1\\$2").replace(SPEAKER_LINE, "$1\\$2");

/**
 * The one escaping of untrusted text for any prompt block: invisible and control characters removed, tags,
 * headers and speaker lines escaped, a code fence the text left open closed. Idempotent: escaping escaped text
 * changes nothing.
 */
export const escapePromptText = (body: string): string => closeFences(escapeMarkup(body));

/** Every kind of line break, and the controls that read as one. */
const BREAKS_AND_CONTROLS = /[\s\p{Cc}]+/gu;

/**
 * One untrusted value for one line of a prompt section: line breaks collapsed to a space (so it cannot start a
 * line of its own), then escaped; a fence it starts with is escaped too (the value may begin its line, and a
 * closing fence would need a line of its own).
 */
export function inlinePromptText(value: string): string {
  const line = escapeMarkup(value.replace(BREAKS_AND_CONTROLS, " ").trim());
  return FENCE.test(line) ? `\\${line}` : line;
}

/** A character as JSON escapes, one per UTF-16 unit (an astral character is a surrogate pair of them). */
const jsonEscape = (ch: string) => Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`).join("");

/**
 * JSON text for a prompt block (the consolidation input), escaped in JSON's own syntax: every `<`, line or
 * paragraph separator, and invisible or control character written as its `\uXXXX` escape. No string in it can
 * then write a tag that closes the block or hide text from the reader, and, unlike `escapePromptText`, no value
 * changes: parsed back, the JSON gives exactly what was written. These characters occur only inside JSON strings,
 * where an escape is always valid.
 */
export function escapePromptJson(json: string): string {
  return json.replace(/[<\u2028\u2029]/g, jsonEscape).replace(INVISIBLE_CHARS, jsonEscape);
}

/**
 * Untrusted text for a document the model is given as a block of its own (a `search_result`): data that cannot
 * forge the prompt's structure from there, but it is cleaned as if it could (invisible characters removed, one
 * line, escaped), so neither what the model reads nor what a citation quotes back carries a smuggled tag.
 */
export const documentText = (value: string): string => inlinePromptText(stripInvisible(value));
