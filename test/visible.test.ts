/**
 * The flagless "no control or format characters" patterns (src/lib/visible.ts) against the runtime's own
 * `\p{Cc}` / `\p{Cf}`, over every code point, with and without the `u` flag a JSON Schema validator may add.
 */
import { describe, expect, it } from "vitest";
import { NO_FORMAT_CHARS, VISIBLE_LINE } from "../src/lib/visible";

const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;
const FORMAT = /\p{Cf}/u;

/** Code points (surrogates excluded: a string holds them only in pairs) where `pattern` disagrees with `refused`. */
function disagreements(pattern: RegExp, refused: RegExp, limit = 0x110000): string[] {
  const out: string[] = [];
  for (let cp = 0; cp < limit; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    if (pattern.test(`a${ch}b`) === refused.test(ch)) out.push(cp.toString(16));
  }
  return out;
}

describe("flagless visible-text patterns", () => {
  it("are plain ECMAScript: no flags", () => {
    expect(VISIBLE_LINE.flags).toBe("");
    expect(NO_FORMAT_CHARS.flags).toBe("");
  });

  it("refuse exactly the control and format characters, in every plane", () => {
    expect(disagreements(VISIBLE_LINE, CONTROL_OR_FORMAT)).toEqual([]);
    expect(disagreements(NO_FORMAT_CHARS, FORMAT)).toEqual([]);
  });

  it("refuse the same characters of the Basic Multilingual Plane under the u flag", () => {
    expect(disagreements(new RegExp(VISIBLE_LINE.source, "u"), CONTROL_OR_FORMAT, 0x10000)).toEqual([]);
    expect(disagreements(new RegExp(NO_FORMAT_CHARS.source, "u"), FORMAT, 0x10000)).toEqual([]);
  });

  it("take text in any script, emoji included, and refuse lone surrogates and tag characters", () => {
    for (const ok of ["Küchenumbau", "家のリフォーム", "مشروع", "🚀 launch 👍🏽", ""]) expect(VISIBLE_LINE.test(ok), ok).toBe(true);
    for (const bad of ["a\u200bb", "x\u202Ey", "a\uD800", "hi\u{E0041}\u{E0042}", "line\nbreak"]) expect(VISIBLE_LINE.test(bad), bad).toBe(false);
    expect(NO_FORMAT_CHARS.test("two\nlines\ttabbed")).toBe(true);
  });
});
