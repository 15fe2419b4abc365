// Pooling and normalization as sentence-transformers computes them, and the padded feeds of one encoder run: pure
// functions over hand-written token rows, with the expected numbers worked out by hand.
import { describe, expect, test } from "bun:test";
import { padBatch, rowsThatFit } from "../../../../workers/embedding/batch-inputs.ts";
import { normalize, poolRow } from "../../../../workers/embedding/pooling.ts";

// Two rows of a [2, 3, 2] output: row 0 has 2 real tokens, row 1 has 3.
const hidden = Float32Array.from([1, 2, 3, 4, 99, 99, /* row 1 */ 5, 6, 7, 8, 9, 10]);

describe("poolRow", () => {
  test("mean averages only the real tokens: the padded position's values never count", () => {
    expect([...poolRow(hidden, 0, 3, 2, 2, "mean")]).toEqual([2, 3]);
    expect([...poolRow(hidden, 1, 3, 2, 3, "mean")]).toEqual([7, 8]);
  });

  test("cls takes the first token, lasttoken the last real one (not the padding after it)", () => {
    expect([...poolRow(hidden, 0, 3, 2, 2, "cls")]).toEqual([1, 2]);
    expect([...poolRow(hidden, 0, 3, 2, 2, "lasttoken")]).toEqual([3, 4]);
    expect([...poolRow(hidden, 1, 3, 2, 3, "lasttoken")]).toEqual([9, 10]);
  });

  test("mean over a row is the same number whatever the padding after it", () => {
    const alone = Float32Array.from([0.1, 0.2, 0.3, 0.7]);
    const padded = Float32Array.from([0.1, 0.2, 0.3, 0.7, 5, 5, 5, 5]);
    expect(poolRow(padded, 0, 4, 2, 2, "mean")).toEqual(poolRow(alone, 0, 2, 2, 2, "mean"));
  });
});

describe("normalize", () => {
  test("scales to unit length; a zero vector stays zero rather than NaN", () => {
    expect([...normalize(Float32Array.from([3, 4]))]).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    expect([...normalize(new Float32Array(3))]).toEqual([0, 0, 0]);
  });
});

describe("padBatch", () => {
  test("pads on the right to the longest row, mask 1 on real tokens only", () => {
    const b = padBatch([[7, 8], [1, 2, 3]]);
    expect([b.rows, b.seq, b.lengths]).toEqual([2, 3, [2, 3]]);
    expect([...b.inputIds]).toEqual([7n, 8n, 0n, 1n, 2n, 3n]);
    expect([...b.attentionMask]).toEqual([1n, 1n, 0n, 1n, 1n, 1n]);
  });
});

describe("rowsThatFit", () => {
  test("takes rows while rows × longest stays within the budget, and always the first", () => {
    expect(rowsThatFit([4, 4, 4, 4], 12)).toBe(3);
    expect(rowsThatFit([2, 2, 10], 12)).toBe(2);
    expect(rowsThatFit([50, 1], 12)).toBe(1);
    expect(rowsThatFit([3, 3], 100)).toBe(2);
  });
});
