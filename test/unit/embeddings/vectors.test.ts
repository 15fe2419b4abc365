// Matryoshka truncation: the first `dims` values, scaled back to unit length when the model's vectors are unit vectors.
import { describe, expect, test } from "bun:test";
import { fitDimensions } from "../../../src/embeddings/vectors.ts";

describe("fitDimensions", () => {
  const v = Float32Array.from([0.6, 0, 0.8, 0]);

  test("the full size (or more) is the vector itself", () => {
    expect(fitDimensions(v, 4, true)).toBe(v);
  });

  test("a cut of a unit vector is rescaled to unit length", () => {
    const cut = fitDimensions(Float32Array.from([0.3, 0.4, 0.5, Math.sqrt(0.5)]), 2, true);
    expect([...cut].map((x) => Math.round(x * 1e6) / 1e6)).toEqual([0.6, 0.8]);
  });

  test("without renormalization the cut is the prefix as it was; an all-zero prefix stays zero", () => {
    expect([...fitDimensions(Float32Array.from([0.3, 0.4, 0.5]), 2, false)]).toEqual([Math.fround(0.3), Math.fround(0.4)]);
    expect([...fitDimensions(Float32Array.from([0, 0, 1]), 2, true)]).toEqual([0, 0]);
  });
});
