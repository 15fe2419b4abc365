// The model's own distribution read from a row of logits: the log normalizer, the top ids (highest first, the lowest
// id on ties, masked ids never), a copy of the row, and a token's entry with its alternatives.
import { describe, expect, test } from "bun:test";
import { rawDistribution, tokenLogprob } from "../../../workers/text/token-logprobs.ts";

const enc = new TextEncoder();
const bytes = (id: number) => enc.encode(`<${id}>`);

describe("rawDistribution", () => {
  test("logZ is the log-sum-exp of the finite logits; masked (−Infinity) ids count for nothing", () => {
    const row = Float32Array.of(1, -Infinity, 3, 0.5, -Infinity, 2);
    const d = rawDistribution(row, 0);
    expect(d.logZ).toBeCloseTo(Math.log(Math.exp(1) + Math.exp(3) + Math.exp(0.5) + Math.exp(2)), 6);
    expect(d.top).toEqual([]);
  });

  test("the top n ids, highest first, the lowest id first among equal logits, masked ids never", () => {
    const row = Float32Array.of(2, 5, -Infinity, 5, 1, 7, 2, 5);
    expect(rawDistribution(row, 3).top).toEqual([5, 1, 3]);
    expect(rawDistribution(row, 5).top).toEqual([5, 1, 3, 7, 0]);
    // More asked than there are unmasked ids: every unmasked one, in order.
    expect(rawDistribution(Float32Array.of(-Infinity, 1, -Infinity, 4), 5).top).toEqual([3, 1]);
  });

  test("the row is copied: later changes to it (penalties, masks) leave the reported values alone", () => {
    const row = Float32Array.of(0, 1, 2, 3);
    const d = rawDistribution(row, 2);
    row.fill(-Infinity);
    const e = tokenLogprob(d, 1, bytes);
    const logZ = Math.log(1 + Math.E + Math.exp(2) + Math.exp(3));
    expect(e.logprob).toBeCloseTo(1 - logZ, 6);
    expect(e.top.map((t) => t.token)).toEqual([3, 2]);
    expect(e.top[0]!.logprob).toBeCloseTo(3 - logZ, 6);
    expect(e.bytes).toEqual(Array.from(bytes(1)));
  });

  test("a token the model gave no chance is reported at −9999, not −Infinity", () => {
    const d = rawDistribution(Float32Array.of(0, -Infinity), 1);
    expect(tokenLogprob(d, 1, bytes).logprob).toBe(-9999);
  });
});
