// float32 → half rounding (ties to even, subnormals, overflow, NaN) and the round trip of every half value.
import { describe, expect, test } from "bun:test";
import { floatToHalf, halfToFloat, toHalfBits } from "../../../../workers/image/half.ts";

describe("toHalfBits", () => {
  test("exact values", () => {
    expect([1, -2, 0, 0.5, 65504].map(toHalfBits)).toEqual([0x3c00, 0xc000, 0, 0x3800, 0x7bff]);
    expect(toHalfBits(-0)).toBe(0x8000);
  });

  test("rounds to nearest, ties to even", () => {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even 1.
    expect(toHalfBits(1 + 2 ** -11)).toBe(0x3c00);
    // 1 + 3·2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties to the even upper one.
    expect(toHalfBits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(toHalfBits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01);
  });

  test("subnormals and underflow", () => {
    expect(toHalfBits(2 ** -24)).toBe(1);
    expect(toHalfBits(2 ** -25)).toBe(0);
    expect(toHalfBits(1.5 * 2 ** -24)).toBe(2);
    expect(toHalfBits(2 ** -26)).toBe(0);
    expect(toHalfBits(2 ** -14 - 2 ** -25)).toBe(0x400);
  });

  test("overflow to infinity; infinities and NaN", () => {
    expect(toHalfBits(65520)).toBe(0x7c00);
    expect(toHalfBits(1e9)).toBe(0x7c00);
    expect(toHalfBits(-Infinity)).toBe(0xfc00);
    expect(Number.isNaN(halfToFloat(Uint16Array.of(toHalfBits(NaN)))[0]!)).toBe(true);
  });
});

test("every finite half survives halfToFloat then floatToHalf", () => {
  const all = new Uint16Array(65536).map((_, i) => i);
  const finite = all.filter((h) => (h & 0x7c00) !== 0x7c00);
  expect(floatToHalf(halfToFloat(finite))).toEqual(finite);
});
