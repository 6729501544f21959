/**
 * Brain writes, from the model's tool calls and from the HTTP API alike, go through the shared
 * cleaning step (src/lib/sanitize.ts); values placed on one line of a prompt section go through the
 * shared prompt escaping (src/lib/prompt-text.ts).
 */
import { inlinePromptText } from "../lib/prompt-text";
import { cleanMemoryText, SANITIZE_MAX_CHARS } from "../lib/sanitize";

export { clamp, SANITIZE_MAX_CHARS } from "../lib/sanitize";

/**
 * Strips control and invisible characters (keeping newlines and tabs), normalises line breaks and
 * odd spaces, applies NFC, trims, clamps to `maxChars` code points and redacts secrets (`cleanMemoryText`).
 * Throws `invalid_request` when nothing visible is left.
 */
export const sanitizeBrainContent = (raw: string, maxChars = SANITIZE_MAX_CHARS): string => cleanMemoryText(raw, maxChars);

/** One untrusted value for one line of a prompt section (see `inlinePromptText`). */
export const inlineText = inlinePromptText;
