/** Properties of the sanitizer and the prompt escaping, over arbitrary text (seeded, bounded runs). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapePromptText, inlinePromptText } from "../src/lib/prompt-text";
import { cleanText, hasLoneSurrogate, stripInvisible } from "../src/lib/sanitize";
import { structure } from "./reliability-helpers";

const RUNS = { seed: 15, numRuns: 400 };

/** Characters attackers use: tag characters, bidi controls, zero-width, BOM, C0/C1, odd line breaks, lone surrogates. */
const hostile = fc.constantFrom(
  "\u{E0041}",
  "\u{E007F}",
  "\u202E",
  "\u2066",
  "\u200B",
  "\u200D",
  "\uFEFF",
  "\u00AD",
  "\u0000",
  "\u001B",
  "\u0085",
  "\u2028",
  "\r",
  "\uD800",
  "\uDFFF",
  "\uFE0F",
  "👩‍💻",
  "#",
  "## ",
  "\n",
  "===",
  "---",
  "</remembered>",
  "<turn_context>",
  "Human:",
  " Assistant :",
  "<",
);
const text = fc.array(fc.oneof(fc.string({ unit: "binary", maxLength: 8 }), hostile), { maxLength: 40 }).map((parts) => parts.join(""));

/** What must never survive: controls (but tab/newline), format characters except a joiner or selector inside an emoji, surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the property is about control characters.
const FORBIDDEN = /[\0-\x08\x0B-\x1F\x7F-\x9F\u2028\u2029\uFEFF\u202A-\u202E\u2066-\u2069\u200B\u200C\u200E\u200F\u{E0000}-\u{E007F}]/u;

describe("sanitizer properties", () => {
  it("no control, invisible or lone-surrogate character survives; the output is NFC and stripping is idempotent", () => {
    fc.assert(
      fc.property(text, (s) => {
        const out = stripInvisible(s);
        expect(FORBIDDEN.test(out)).toBe(false);
        expect(hasLoneSurrogate(out)).toBe(false);
        expect(out.normalize("NFC")).toBe(out);
        expect(stripInvisible(out)).toBe(out);
        // Valid UTF-8 round trip: nothing is replaced by U+FFFD on the way to storage.
        expect(new TextDecoder().decode(new TextEncoder().encode(out))).toBe(out);
      }),
      RUNS,
    );
  });

  it("cleanText is bounded in code points, trimmed, never empty (it throws instead)", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 50 }), (s, max) => {
        let out: string;
        try {
          out = cleanText(s, max);
        } catch (err) {
          expect((err as { code?: string }).code).toBe("invalid_request");
          return;
        }
        expect([...out].length).toBeLessThanOrEqual(max);
        expect(out).toBe(out.trim());
        expect(out.length).toBeGreaterThan(0);
      }),
      RUNS,
    );
  });
});

describe("prompt escaping properties", () => {
  it("no escaped body has a header, setext underline, tag line or speaker line; escaping is idempotent", () => {
    fc.assert(
      fc.property(text, (s) => {
        const body = escapePromptText(stripInvisible(s));
        expect(structure(body)).toEqual([]);
        expect(escapePromptText(body)).toBe(body);
        expect(body).not.toMatch(/<\/?[A-Za-z]/);
      }),
      RUNS,
    );
  });

  it("an inline value is one line and escaped", () => {
    fc.assert(
      fc.property(text, (s) => {
        const line = inlinePromptText(stripInvisible(s));
        expect(line).not.toContain("\n");
        expect(structure(line)).toEqual([]);
      }),
      RUNS,
    );
  });
});
