// costMicros and worstCaseMicros: exact integer micro-units, the cached-input rate, and the hold's worst case.
import { describe, expect, test } from "bun:test";
import { costMicros, MICROS_PER_UNIT, worstCaseMicros } from "../../../src/billing/cost.ts";

/** Prices as parsePricing gives them: the cached-input rate is the input rate unless set. */
const price = (inputPerMillion: number, outputPerMillion: number, cachedInputPerMillion = inputPerMillion) => ({ inputPerMillion, cachedInputPerMillion, outputPerMillion, perImage: null });

describe("costMicros", () => {
  test("a price per million tokens is micro-units per token", () => {
    expect(costMicros(price(2, 8), { inputTokens: 10, outputTokens: 3 })).toBe(10 * 2 + 3 * 8);
    expect(costMicros(price(2, 8), { inputTokens: 1_000_000, outputTokens: 0 })).toBe(2 * MICROS_PER_UNIT);
  });

  test("fractional prices are exact where floats drift, and the total is rounded half up once", () => {
    // 0.3 × 7 tokens = 2.1 micros and 0.15 × 3 = 0.45 (neither exact in floats): 2.55 in all → 3, where
    // rounding each part on its own would give 2 + 0 = 2.
    expect(costMicros(price(0.3, 0.15), { inputTokens: 7, outputTokens: 3 })).toBe(3);
    expect(costMicros(price(0.1, 0.4), { inputTokens: 5, outputTokens: 0 })).toBe(1); // 0.5 → 1
    expect(costMicros(price(0.1, 0.4), { inputTokens: 4, outputTokens: 0 })).toBe(0); // 0.4 → 0
  });

  test("free models cost nothing; results are integers even for counts beyond float-exact products", () => {
    expect(costMicros(price(0, 0), { inputTokens: 123, outputTokens: 456 })).toBe(0);
    const big = costMicros(price(1234.567891, 0), { inputTokens: 9_000_000_000, outputTokens: 0 });
    expect(Number.isSafeInteger(big)).toBe(true);
    expect(big).toBe(9_000 * 1_234_567_891);
  });

  test("images cost the per-image price each, exactly, beside the tokens; a model with no image price charges none", () => {
    const priced = { inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 0, perImage: 0.01 };
    expect(costMicros(priced, { inputTokens: 0, outputTokens: 0, images: 1 })).toBe(10_000);
    expect(costMicros(priced, { inputTokens: 12, outputTokens: 0, images: 3 })).toBe(30_012);
    expect(costMicros({ ...priced, perImage: 0.0333333 }, { inputTokens: 0, outputTokens: 0, images: 3 })).toBe(99_999);
    expect(costMicros(price(1, 1), { inputTokens: 0, outputTokens: 0, images: 5 })).toBe(0);
    expect(() => costMicros(priced, { inputTokens: 0, outputTokens: 0, images: -1 })).toThrow(RangeError);
  });

  test("refuses token counts that are not non-negative integers", () => {
    expect(() => costMicros(price(1, 1), { inputTokens: -1, outputTokens: 0 })).toThrow(RangeError);
    expect(() => costMicros(price(1, 1), { inputTokens: 1.5, outputTokens: 0 })).toThrow(RangeError);
    expect(() => costMicros(price(1, 1), { inputTokens: 5, cachedTokens: -1, outputTokens: 0 })).toThrow(RangeError);
    expect(() => costMicros(price(1, 1), { inputTokens: 5, cachedTokens: 0.5, outputTokens: 0 })).toThrow(RangeError);
  });
});

describe("cached input", () => {
  test("cached prompt tokens bill at the cached rate, the rest of the prompt at the input rate", () => {
    // 100 input tokens, 64 of them cached: 36 × 3 + 64 × 0.5 + 10 × 8 = 108 + 32 + 80.
    expect(costMicros(price(3, 8, 0.5), { inputTokens: 100, cachedTokens: 64, outputTokens: 10 })).toBe(220);
    expect(costMicros(price(3, 8, 0.5), { inputTokens: 100, cachedTokens: 100, outputTokens: 0 })).toBe(50);
    // A free cache read.
    expect(costMicros(price(2, 0, 0), { inputTokens: 1_000_000, cachedTokens: 999_999, outputTokens: 0 })).toBe(2);
  });

  test("the cached rate is taken to the micro-unit and the whole sum rounded half up once", () => {
    // 7 × 0.3 + 5 × 0.05 = 2.1 + 0.25 = 2.35 → 2; with 10 cached instead, 2 × 0.3 + 10 × 0.05 = 1.1 → 1.
    expect(costMicros(price(0.3, 0, 0.05), { inputTokens: 12, cachedTokens: 5, outputTokens: 0 })).toBe(2);
    expect(costMicros(price(0.3, 0, 0.05), { inputTokens: 12, cachedTokens: 10, outputTokens: 0 })).toBe(1);
    // 1 × 0.1 + 4 × 0.1 = 0.5 → 1 (half up); per-part rounding would give 0 + 0.
    expect(costMicros(price(0.1, 0, 0.1), { inputTokens: 5, cachedTokens: 4, outputTokens: 0 })).toBe(1);
    // Exact beyond float-exact products: 9e9 cached tokens at 1234.567891 per million.
    expect(costMicros(price(0, 0, 1234.567891), { inputTokens: 9_000_000_000, cachedTokens: 9_000_000_000, outputTokens: 0 })).toBe(9_000 * 1_234_567_891);
  });

  test("at the default cached rate (the input rate) caching changes nothing", () => {
    for (const cachedTokens of [0, 1, 48, 63, 64]) {
      expect(costMicros(price(0.1, 0.4), { inputTokens: 64, cachedTokens, outputTokens: 9 })).toBe(costMicros(price(0.1, 0.4), { inputTokens: 64, outputTokens: 9 }));
    }
  });

  test("more cached tokens than prompt tokens is refused", () => {
    expect(() => costMicros(price(1, 1, 0.5), { inputTokens: 10, cachedTokens: 11, outputTokens: 0 })).toThrow(RangeError);
    expect(costMicros(price(1, 1, 0.5), { inputTokens: 10, cachedTokens: 10, outputTokens: 0 })).toBe(5);
  });

  test("worstCaseMicros holds the prompt at the dearer of the two rates", () => {
    const counts = { inputTokens: 100, outputTokens: 10, images: 0 };
    // Cheaper cache reads: the worst case is a miss.
    expect(worstCaseMicros(price(3, 8, 0.5), counts)).toBe(100 * 3 + 10 * 8);
    // A cached rate above the input rate: the worst case is a full hit.
    expect(worstCaseMicros(price(3, 8, 5), counts)).toBe(100 * 5 + 10 * 8);
    expect(worstCaseMicros(price(3, 8), counts)).toBe(costMicros(price(3, 8), counts));
    // Whatever the split turns out to be, the charge is within the hold.
    for (const cached of [0, 50, 99, 100]) {
      for (const p of [price(3, 8, 0.5), price(3, 8, 5), price(0.15, 0.6, 0.150001)]) {
        expect(costMicros(p, { ...counts, cachedTokens: cached })).toBeLessThanOrEqual(worstCaseMicros(p, counts));
      }
    }
  });
});
