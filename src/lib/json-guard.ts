/**
 * Limits on the shape of a JSON request body, checked before it is parsed for a handler: deeply nested
 * values (stack depth in every consumer, and a 500 in drizzle or the model SDK) and strings that are
 * not valid Unicode (they cannot be stored as UTF-8: D1 would silently turn them into U+FFFD).
 */
import { AppError } from "./errors";
import { hasLoneSurrogate } from "./sanitize";

/** Arrays and objects nested deeper than this are refused; no engram body needs more than a handful of levels. */
export const MAX_JSON_DEPTH = 32;

/** The deepest nesting of arrays and objects in JSON text, counted without parsing (strings are skipped). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      // A backslash escapes the next character (possibly a quote).
      if (ch === 0x5c) i++;
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) max = Math.max(max, ++depth);
    else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return max;
}

/** The path of the first string or key (depth-first) holding a lone surrogate, or null. */
function loneSurrogateAt(value: unknown, path: string): string | null {
  if (typeof value === "string") return hasLoneSurrogate(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = loneSurrogateAt(value[i], `${path}[${i}]`);
      if (hit) return hit;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (hasLoneSurrogate(k)) return `${path} (a key)`;
      const hit = loneSurrogateAt(v, `${path}.${k}`);
      if (hit) return hit;
    }
  }
  return null;
}

/**
 * Parses a JSON request body, refusing (`invalid_request`) malformed JSON, nesting deeper than
 * MAX_JSON_DEPTH and lone surrogates anywhere. Depth is checked on the text, before parsing.
 */
export function parseGuardedJson(text: string): unknown {
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw new AppError("invalid_request", `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError("invalid_request", "malformed JSON in request body");
  }
  const at = loneSurrogateAt(value, "body");
  if (at) throw new AppError("invalid_request", `${at}: text is not valid Unicode (a lone surrogate)`);
  return value;
}
