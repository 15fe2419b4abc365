import { describe, expect, test } from "bun:test";
import { createRng } from "../../../workers/text/prng.ts";

describe("createRng", () => {
  test("the same seed gives the same stream", () => {
    const a = createRng(42);
    const b = createRng(42);
    const xs = Array.from({ length: 20 }, () => a());
    expect(Array.from({ length: 20 }, () => b())).toEqual(xs);
  });

  test("neighbouring seeds give different streams", () => {
    const a = Array.from({ length: 8 }, createRng(1));
    const b = Array.from({ length: 8 }, createRng(2));
    expect(a).not.toEqual(b);
    expect(Array.from({ length: 8 }, createRng(0))).not.toEqual(a);
  });

  test("seeds beyond 32 bits are distinguished", () => {
    expect(createRng(2 ** 32 + 5)()).not.toBe(createRng(5)());
  });

  test("values lie in [0, 1) and spread evenly", () => {
    const rng = createRng(7);
    const bins = new Array(10).fill(0);
    let sum = 0;
    for (let i = 0; i < 20000; i++) {
      const x = rng();
      expect(x >= 0 && x < 1).toBe(true);
      bins[Math.floor(x * 10)]++;
      sum += x;
    }
    expect(Math.abs(sum / 20000 - 0.5)).toBeLessThan(0.01);
    for (const n of bins) expect(Math.abs(n - 2000)).toBeLessThan(200);
  });
});
