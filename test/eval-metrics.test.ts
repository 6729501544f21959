import { describe, expect, it } from "vitest";
import { mcnemarExact } from "../bench/recall/metrics";

describe("the evaluation's paired test", () => {
  it("gives McNemar's exact two-sided p-value", () => {
    // One disputed question either way proves nothing.
    expect(mcnemarExact(0, 1)).toBe(1);
    expect(mcnemarExact(5, 5)).toBe(1);
    // 1 against 9: 2 * (1 + 10) / 1024.
    expect(mcnemarExact(1, 9)).toBeCloseTo(22 / 1024, 12);
    expect(mcnemarExact(9, 1)).toBeCloseTo(22 / 1024, 12);
    // 0 against 10: 2 / 1024.
    expect(mcnemarExact(0, 10)).toBeCloseTo(2 / 1024, 12);
    // Large counts stay finite and tiny: 80 against 20.
    const p = mcnemarExact(80, 20);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1e-8);
    // Past the point where 2^-n underflows, an even split is still no evidence.
    expect(mcnemarExact(600, 600)).toBeCloseTo(1, 6);
  });
});
