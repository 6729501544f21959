/**
 * A fact's key names the changing, single-valued attribute it states, subject included ("user.home_city",
 * "sister.employer"). Whoever knows names it: the consolidation model or the API caller. facts-write.ts only
 * compares keys for equality, so supersession works in any language and reads no meaning into the text.
 */
import { z } from "zod";
import { stripInvisible } from "../lib/sanitize";
import { VISIBLE_LINE } from "../lib/visible";

export const FACT_KEY_MAX_CHARS = 100;

/** The convention, told to the model (consolidation schema) and to API callers (OpenAPI) in the same words. */
export const FACT_KEY_CONVENTION =
  "A stable key for the changing, single-valued attribute this fact states, subject included: lowercase subject.attribute, " +
  "e.g. user.home_city, user.employer, user.partner, sister.home_city. The subject is part of the key: a fact about someone " +
  "else never uses user. (the user's sister's city is sister.home_city). A fact with a key replaces the user's earlier " +
  "facts with the same key, so reuse the key an existing fact already has for the same attribute, and give none to facts " +
  "that are not such an attribute: events, hobbies, likes, anything that can hold several values at once.";

/** Keys compare after NFC and lower-casing (locale-independent), so "User.Home_City" is "user.home_city". */
const normalizeKey = (key: string) => key.normalize("NFC").trim().toLowerCase();

/** A key from an API caller: refused (400) rather than cleaned, so the key stored is the one they sent. */
export const FactKey = z
  .string()
  .trim()
  .min(1)
  .max(FACT_KEY_MAX_CHARS)
  .regex(VISIBLE_LINE, "may not contain invisible or control characters")
  .transform(normalizeKey)
  .describe(FACT_KEY_CONVENTION);

/**
 * A key from the model, or one stored: cleaned as the model's profile keys are (invisible characters removed),
 * and none when nothing is left or it is too long for an API caller to name it back.
 */
export function cleanFactKey(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const key = normalizeKey(stripInvisible(raw).replace(/\s+/g, " "));
  return key === "" || [...key].length > FACT_KEY_MAX_CHARS ? null : key;
}
