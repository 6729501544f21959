/**
 * Escaping for untrusted text placed inside a prompt's structure (section bodies: working memory,
 * SOUL, BIBLE, facts, observations). The prompt's structure is Markdown headers (`## SOUL ...`),
 * XML-like tags (`<turn_context>`, `<remembered>`) and the conversation itself; a body must not be
 * able to produce any of them. Escaping keeps the text readable: a backslash before a line that would
 * be structure, and `‹` for a `<` that opens a tag.
 */
import { stripInvisible } from "./sanitize";

/** A line that Markdown reads as a header: ATX (`## x`, indented or not) or a setext underline (`===`, `---`). */
const HEADER_LINE = /^([ \t]*)(#{1,6}(?=[ \t]|$)|=+[ \t]*$|-+[ \t]*$)/gm;
/** A line that reads as a speaker turn of a transcript (`Human:`, `Assistant:`, `System:`, `User:`). */
const SPEAKER_LINE = /^([ \t]*)((?:human|assistant|system|user)[ \t]*:)/gim;
/** `<` opening a tag-like run (`</remembered>`, `<system>`, `<!--`). */
const TAG_OPEN = /<(?=\/?[A-Za-z!?])/g;

/** Idempotent: escaping escaped text changes nothing. */
export function escapePromptText(body: string): string {
  return body.replace(TAG_OPEN, "‹").replace(HEADER_LINE, "$1\\$2").replace(SPEAKER_LINE, "$1\\$2");
}

/** Every kind of line break, and the controls that read as one. */
const BREAKS_AND_CONTROLS = /[\s\p{Cc}]+/gu;

/**
 * One untrusted value for one line of a prompt section: line breaks collapsed to a space (so it cannot
 * start a line of its own), then escaped.
 */
export function inlinePromptText(value: string): string {
  return escapePromptText(value.replace(BREAKS_AND_CONTROLS, " ").trim());
}

/**
 * Untrusted text for a document the model is given as a block of its own (a `search_result`): data that cannot
 * forge the prompt's structure from there, but it is cleaned as if it could (invisible characters removed, one
 * line, escaped), so neither what the model reads nor what a citation quotes back carries a smuggled tag.
 */
export const documentText = (value: string): string => inlinePromptText(stripInvisible(value));
