/**
 * "No control or format characters" as regular expressions written without flags, so the same source holds in
 * the OpenAPI document (`pattern` is ECMAScript without flags) and on the server. `\p{Cf}` would need the `u`
 * flag; the characters are listed instead (Unicode 17), and test/visible.test.ts checks the list against the
 * runtime's `\p{Cc}` and `\p{Cf}` over every code point. Above the Basic Multilingual Plane a character is a
 * surrogate pair: the format characters there are refused pair by pair, lone surrogates always.
 * Under the `u` flag (a validator's default) the patterns compile too, and refuse the same characters in the BMP.
 */
const CONTROL = "\\x00-\\x1F\\x7F-\\x9F";
const FORMAT_BMP =
  "\\xAD\\u0600-\\u0605\\u061C\\u06DD\\u070F\\u0890\\u0891\\u08E2\\u180E\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u206F\\uFEFF\\uFFF9-\\uFFFB";
/** U+110BD, U+110CD, U+13430-1343F, U+1BCA0-1BCA3, U+1D173-1D17A, U+E0001, U+E0020-E007F (tags). */
const FORMAT_ASTRAL = "\\uD804[\\uDCBD\\uDCCD]|\\uD80D[\\uDC30-\\uDC3F]|\\uD82F[\\uDCA0-\\uDCA3]|\\uD834[\\uDD73-\\uDD7A]|\\uDB40[\\uDC01\\uDC20-\\uDC7F]";

const without = (bmp: string) => new RegExp(`^(?:[^${bmp}\\uD800-\\uDFFF]|(?!${FORMAT_ASTRAL})[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$`);

/** One line of visible text: no control (Cc) or format (Cf) character. */
export const VISIBLE_LINE = without(CONTROL + FORMAT_BMP);

/** Text that may span lines but hides nothing: no format (Cf) character. */
export const NO_FORMAT_CHARS = without(FORMAT_BMP);
