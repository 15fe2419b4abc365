// Box–Muller noise: the exact pairing and order of the uniform draws, and sane statistics over the worker's PRNG.
import { describe, expect, test } from "bun:test";
import { createRng } from "../../../../workers/text/prng.ts";
import { gaussianFill } from "../../../../workers/image/gaussian.ts";

/** A stand-in generator returning the given values in turn. */
const sequence = (values: number[]) => {
  let i = 0;
  return () => values[i++]!;
};

describe("gaussianFill", () => {
  test("pairs (u1, u2) give r·cos and r·sin, r = √(−2 ln(1 − u1))", () => {
    const out = gaussianFill(sequence([0.5, 0.125, 0.75, 0.5]), 4);
    const r1 = Math.sqrt(-2 * Math.log(0.5));
    const r2 = Math.sqrt(-2 * Math.log(0.25));
    expect(Array.from(out)).toEqual([r1 * Math.cos(Math.PI / 4), r1 * Math.sin(Math.PI / 4), r2 * Math.cos(Math.PI), r2 * Math.sin(Math.PI)]);
  });

  test("an odd count still draws a full pair for its last value and drops the sine", () => {
    let draws = 0;
    const rng = () => (draws++, 0.3);
    const out = gaussianFill(rng, 3);
    expect(out.length).toBe(3);
    expect(draws).toBe(4);
    expect(out[2]).toBe(out[0]!);
  });

  test("u1 = 0 gives 0, not −∞", () => {
    // −2·ln(1) is −0, so r is −0: finite, and adds nothing.
    expect(Array.from(gaussianFill(sequence([0, 0]), 2)).map(Math.abs)).toEqual([0, 0]);
  });

  test("same seed, same noise; mean ≈ 0 and variance ≈ 1 over the seeded PRNG", () => {
    const a = gaussianFill(createRng(42), 20000);
    expect(gaussianFill(createRng(42), 20000)).toEqual(a);
    const mean = a.reduce((s, v) => s + v, 0) / a.length;
    const variance = a.reduce((s, v) => s + (v - mean) ** 2, 0) / a.length;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(variance - 1)).toBeLessThan(0.04);
  });
});
