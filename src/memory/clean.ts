/**
 * The JSON the memory tiers store from untrusted hands, cleaned one way whoever wrote it: the user's own edits of
 * the scaffold, the consolidation model's profile update, what the assistant learned about a connection. All of it
 * is injected into later prompts and shown back to the user, so invisible characters go and secrets are redacted
 * (text is cleaned by `cleanMemoryText`).
 */
import type { Json, JsonObject } from "../db/schema";
import { namesSecret, REDACTED, redactSecrets } from "../lib/redact";
import { stripInvisible } from "../lib/sanitize";

/** A key of a stored JSON object: its invisible characters removed and trimmed. */
export const cleanKey = (key: string): string => stripInvisible(key).trim();

/**
 * Invisible and control characters go from every key and string of a value, and secrets are redacted, as from any
 * text memory stores: a string under a key that names a secret (`DB_PASSWORD`, `api_key`) goes whole, whatever it
 * looks like, as `DB_PASSWORD=...` would in text.
 */
export function cleanJson(v: Json, key?: string): Json {
  if (typeof v === "string") {
    const text = stripInvisible(v).trim();
    return key !== undefined && text !== "" && namesSecret(key) ? REDACTED : redactSecrets(text);
  }
  if (Array.isArray(v)) return v.map((x) => cleanJson(x, key));
  if (v && typeof v === "object")
    return Object.fromEntries(
      // A key with nothing visible in it could be neither shown nor removed by name: it goes with its value.
      Object.entries(v).flatMap(([k, x]) => {
        const name = cleanKey(k);
        return name === "" ? [] : [[name, cleanJson(x, name)]];
      }),
    );
  return v;
}

/** The longest top-level key, in characters: what the user's own edit accepts and can remove by name. */
export const MAX_KEY_CHARS = 100;

/**
 * `cleanJson` of an object (a profile update, a connection's learned info): still an object, without top-level
 * keys longer than `MAX_KEY_CHARS` (cut, two could collide; kept, no edit could name them to remove them).
 */
export const cleanJsonObject = (o: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(cleanJson(o) as JsonObject).filter(([k]) => [...k].length <= MAX_KEY_CHARS));
