/**
 * The one cleaning step for untrusted text that is stored and later read back to a model (facts,
 * observations, names, chat messages, brain documents): from the HTTP API and from the model's own
 * tool calls alike. Invisible characters are how instructions get smuggled into text that is later
 * injected into a prompt, so they are removed, not escaped.
 */
import { AppError } from "./errors";
import { redactSecrets } from "./redact";

/** A hard ceiling above every plan's cap; it bounds the work, and the caller's own limit then rejects. */
export const SANITIZE_MAX_CHARS = 20_000;

const ZWJ = "\u200D";
const EMOJI_PRESENTATION = "\uFE0F";

/**
 * C0/C1 controls except tab and newline, format characters (zero-width, bidi embeddings, overrides and
 * isolates, BOM, soft hyphen, tag characters), lone surrogates, letters that render as nothing, and
 * variation selectors (U+FE0F survives only right after an emoji, where it picks the emoji glyph).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point: they are removed.
// biome-ignore lint/suspicious/noMisleadingCharacterClass: single code points (combining marks, variation selectors) are removed one by one.
export const INVISIBLE_CHARS = /[\0-\x08\x0B-\x1F\x7F-\x9F\p{Cf}\p{Cs}\u034F\u115F\u1160\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;
const LINE_BREAKS = /\r\n?|[\u2028\u2029\x85]/g;
const ODD_SPACES = /[\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/g;
const EMOJI_BEFORE = /[\p{Extended_Pictographic}\p{Emoji_Modifier}]\uFE0F?$/u;
const EMOJI_AFTER = /^\p{Extended_Pictographic}/u;
const EMOJI_BASE = /\p{Emoji}$/u;
const LONE_SURROGATE = /\p{Cs}/u;

/** A zero-width joiner is kept only inside an emoji sequence (👩‍💻), where it is visible meaning. */
function keepJoiner(text: string, offset: number): boolean {
  return EMOJI_BEFORE.test(text.slice(Math.max(0, offset - 3), offset)) && EMOJI_AFTER.test(text.slice(offset + 1, offset + 3));
}

function keep(ch: string, offset: number, all: string): boolean {
  if (ch === ZWJ) return keepJoiner(all, offset);
  return ch === EMOJI_PRESENTATION && EMOJI_BASE.test(all.slice(Math.max(0, offset - 2), offset));
}

/** Cuts at a code point boundary, never inside a surrogate pair. */
export function clamp(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let out = "";
  let n = 0;
  for (const ch of text) {
    if (n++ >= maxChars) break;
    out += ch;
  }
  return out;
}

/** True when the string holds half of a surrogate pair on its own: not valid Unicode, cannot be stored as UTF-8. */
export const hasLoneSurrogate = (text: string) => LONE_SURROGATE.test(text);

/**
 * Removes control and invisible characters (keeping newlines and tabs), normalises line breaks to `\n`
 * and odd spaces to a space, and applies NFC. Nothing else changes: no trimming, no clamping.
 */
export function stripInvisible(raw: string): string {
  return raw
    .replace(LINE_BREAKS, "\n")
    .replace(INVISIBLE_CHARS, (ch, offset: number, all: string) => (keep(ch, offset, all) ? ch : ""))
    .replace(ODD_SPACES, " ")
    .normalize("NFC");
}

/**
 * `stripInvisible`, then trimmed and clamped to `maxChars` code points. Throws `invalid_request`
 * (naming `field`) when nothing visible is left.
 */
export function cleanText(raw: string, maxChars = SANITIZE_MAX_CHARS, field = "content"): string {
  const text = clamp(stripInvisible(raw).trim(), maxChars).trimEnd();
  if (text === "") throw new AppError("invalid_request", `${field} is empty once invisible and control characters are removed`);
  return text;
}

/**
 * `cleanText` with secrets redacted: the cleaner for every string engram stores and later shows to a model or the
 * user (observations, facts, brain documents, lessons, and the names of projects, connections, sites and API
 * keys). Stored text is injected into prompts and shown back, so an API key or a password pasted into it never
 * stays there.
 */
export const cleanMemoryText = (raw: string, maxChars = SANITIZE_MAX_CHARS, field = "content"): string => redactSecrets(cleanText(raw, maxChars, field));

/** `cleanMemoryText` for text that may be empty: with nothing visible in it, it is "" rather than an error. */
export const cleanMemoryTextOrEmpty = (raw: string, maxChars = SANITIZE_MAX_CHARS): string =>
  stripInvisible(raw).trim() === "" ? "" : cleanMemoryText(raw, maxChars);
