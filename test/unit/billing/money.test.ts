import { describe, expect, test } from "bun:test";
import { formatMicros, parseAmount } from "../../../src/billing/money.ts";

describe("money in micro-units", () => {
  test("parse decimal text exactly", () => {
    expect(parseAmount("25")).toBe(25_000_000);
    expect(parseAmount("0.1")).toBe(100_000);
    expect(parseAmount("0.000001")).toBe(1);
    // 0.29 is not exact as a float (0.29 × 1e6 = 289999.99…): text parsing is.
    expect(parseAmount("0.29")).toBe(290_000);
    for (const bad of ["", "-1", "1e3", "0.0000001", "0", "1,5", "abc", "12345678901"]) expect(() => parseAmount(bad)).toThrow();
  });

  test("format with at least two decimals, trailing zeros trimmed", () => {
    expect(formatMicros(12_500_000)).toBe("12.50");
    expect(formatMicros(1234)).toBe("0.001234");
    expect(formatMicros(-5)).toBe("-0.000005");
    expect(formatMicros(0)).toBe("0.00");
    expect(formatMicros(290_000)).toBe("0.29");
    expect(() => formatMicros(0.5)).toThrow(RangeError);
  });
});
