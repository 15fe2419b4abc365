import { describe, expect, test } from "bun:test";
import { costMicros, MICROS_PER_UNIT } from "../../../src/billing/cost.ts";

const price = (inputPerMillion: number, outputPerMillion: number) => ({ inputPerMillion, outputPerMillion, perImage: null });

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
    const priced = { inputPerMillion: 1, outputPerMillion: 0, perImage: 0.01 };
    expect(costMicros(priced, { inputTokens: 0, outputTokens: 0, images: 1 })).toBe(10_000);
    expect(costMicros(priced, { inputTokens: 12, outputTokens: 0, images: 3 })).toBe(30_012);
    expect(costMicros({ ...priced, perImage: 0.0333333 }, { inputTokens: 0, outputTokens: 0, images: 3 })).toBe(99_999);
    expect(costMicros(price(1, 1), { inputTokens: 0, outputTokens: 0, images: 5 })).toBe(0);
    expect(() => costMicros(priced, { inputTokens: 0, outputTokens: 0, images: -1 })).toThrow(RangeError);
  });

  test("refuses token counts that are not non-negative integers", () => {
    expect(() => costMicros(price(1, 1), { inputTokens: -1, outputTokens: 0 })).toThrow(RangeError);
    expect(() => costMicros(price(1, 1), { inputTokens: 1.5, outputTokens: 0 })).toThrow(RangeError);
  });
});
