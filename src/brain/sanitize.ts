/**
 * The one cleaning step every brain write goes through, from the model's tool calls and from the
 * HTTP API alike: both are untrusted. Invisible characters are how instructions get smuggled into
 * text that is later injected into a system prompt, so they are removed, not escaped.
 */
import { AppError } from "../lib/errors";

/** A hard ceiling above every plan's cap; it bounds the work, and the plan limit then rejects. */
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
const INVISIBLE = /[\0-\x08\x0B-\x1F\x7F-\x9F\p{Cf}\p{Cs}\u034F\u115F\u1160\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;
const LINE_BREAKS = /\r\n?|[\u2028\u2029\x85]/g;
const ODD_SPACES = /[\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/g;
const EMOJI_BEFORE = /[\p{Extended_Pictographic}\p{Emoji_Modifier}]\uFE0F?$/u;
const EMOJI_AFTER = /^\p{Extended_Pictographic}/u;
const EMOJI_BASE = /\p{Emoji}$/u;

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

/**
 * Strips control and invisible characters (keeping newlines and tabs), normalises line breaks and
 * odd spaces, applies NFC, trims, and clamps to `maxChars` code points. Throws `invalid_request` when
 * nothing visible is left.
 */
export function sanitizeBrainContent(raw: string, maxChars = SANITIZE_MAX_CHARS): string {
  const stripped = raw
    .replace(LINE_BREAKS, "\n")
    .replace(INVISIBLE, (ch, offset: number, all: string) => (keep(ch, offset, all) ? ch : ""))
    .replace(ODD_SPACES, " ");
  const text = clamp(stripped.normalize("NFC").trim(), maxChars).trimEnd();
  if (text === "") throw new AppError("invalid_request", "content is empty once invisible and control characters are removed");
  return text;
}

/** Every kind of line break, and the controls the sanitizer would turn into one (U+0085). */
const BREAKS_AND_CONTROLS = /[\s\p{Cc}]+/gu;
/** `<` opening a tag-like run (`</remembered>`, `<system>`): the prompt's own markup must not be forgeable. */
const TAG_OPEN = /<(?=\/?[A-Za-z!?])/g;

/**
 * One untrusted value for one line of a prompt section: line breaks collapsed to a space (so it cannot
 * start a line of its own, e.g. a forged `## SOUL` header) and tag-like `<` replaced by `‹`.
 */
export function inlineText(value: string): string {
  return value.replace(BREAKS_AND_CONTROLS, " ").replace(TAG_OPEN, "‹").trim();
}
