import { describe, expect, test } from "bun:test";
import { chunkInputs, decodeInputs, extendInputs, type FeatureRows, overCapacity, prefillInputs, withFeatures } from "../../../workers/text/batch-inputs.ts";

const nums = (a: BigInt64Array) => Array.from(a, Number);

describe("prefillInputs", () => {
  test("left-pads shorter prompts with the pad id and masks the padding", () => {
    const x = prefillInputs([[5, 6, 7], [9]], 0);
    expect([x.batch, x.seqLen, x.pastLen]).toEqual([2, 3, 0]);
    expect(nums(x.inputIds)).toEqual([5, 6, 7, 0, 0, 9]);
    expect(nums(x.attentionMask)).toEqual([1, 1, 1, 0, 0, 1]);
    expect(nums(x.positionIds)).toEqual([0, 1, 2, 0, 0, 0]);
  });

  test("uses the given pad id", () => {
    expect(nums(prefillInputs([[1, 2], [3]], 77).inputIds)).toEqual([1, 2, 77, 3]);
  });
});

describe("decodeInputs", () => {
  test("masks each row's padding and positions each row at its true length", () => {
    const x = decodeInputs([11, 12], [3, 1], 3);
    expect([x.batch, x.seqLen, x.pastLen]).toEqual([2, 1, 3]);
    expect(nums(x.inputIds)).toEqual([11, 12]);
    expect(nums(x.attentionMask)).toEqual([1, 1, 1, 1, 0, 0, 1, 1]);
    expect(nums(x.positionIds)).toEqual([3, 1]);
  });

  test("rejects a row longer than the past", () => {
    expect(() => decodeInputs([1], [4], 3)).toThrow("claims 4");
  });
});

describe("chunkInputs", () => {
  test("continues positions after the cached part and attends to all of it", () => {
    const x = chunkInputs([7, 8, 9], 4);
    expect([x.batch, x.seqLen, x.pastLen]).toEqual([1, 3, 4]);
    expect(nums(x.inputIds)).toEqual([7, 8, 9]);
    expect(nums(x.attentionMask)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(nums(x.positionIds)).toEqual([4, 5, 6]);
  });
});

describe("overCapacity", () => {
  test("masks the spare columns between the used past and the new tokens", () => {
    const step = decodeInputs([7, 8], [2, 1], 2);
    const wide = overCapacity(step, 4);
    expect(wide.pastLen).toBe(4);
    expect(Array.from(wide.attentionMask, Number)).toEqual([1, 1, 0, 0, 1, 0, 1, 0, 0, 1]);
    expect(wide.inputIds).toBe(step.inputIds);
    expect(wide.positionIds).toBe(step.positionIds);
    expect(overCapacity(step, 2)).toBe(step);
    expect(() => overCapacity(step, 1)).toThrow("below");
  });

  test("a prefill chunk over a cache with room: past ones, spare zeros, then the chunk's ones", () => {
    const wide = overCapacity(chunkInputs([4, 5], 3), 5);
    expect(Array.from(wide.attentionMask, Number)).toEqual([1, 1, 1, 0, 0, 1, 1]);
  });
});

describe("extendInputs", () => {
  test("rows over cached pasts: pasts right-aligned at pastLen, new tokens right-aligned, positions continue", () => {
    const x = extendInputs([{ tokens: [5, 6], past: 3 }, { tokens: [7], past: 0 }, { tokens: [8, 9], past: 1 }], 3, 0);
    expect(x.batch).toBe(3);
    expect(x.seqLen).toBe(2);
    expect(x.pastLen).toBe(3);
    expect(Array.from(x.inputIds, Number)).toEqual([5, 6, 0, 7, 8, 9]);
    expect(Array.from(x.attentionMask, Number)).toEqual([1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1]);
    expect(Array.from(x.positionIds, Number)).toEqual([3, 4, 0, 0, 1, 2]);
  });

  test("a row with a past and fewer new tokens than the pass is refused (its padding would split past and tokens)", () => {
    expect(() => extendInputs([{ tokens: [5, 6], past: 0 }, { tokens: [7], past: 2 }], 2, 0)).toThrow(/has a past/);
    expect(() => extendInputs([{ tokens: [5], past: 3 }], 2, 0)).toThrow(/claims 3/);
  });
});

describe("withFeatures", () => {
  test("attaches every row's feature rows in row order; a text-only pass keeps its inputs as they are", () => {
    const inputs = decodeInputs([5, 6], [3, 2], 3);
    expect(withFeatures(inputs, [[], []])).toBe(inputs);
    const a = { row: 0, col: 1, data: new Float32Array([1, 2]) } as unknown as FeatureRows;
    const b = { row: 1, col: 0, data: new Float32Array([3, 4]) } as unknown as FeatureRows;
    expect(withFeatures(inputs, [[a], [b]])).toEqual({ ...inputs, features: [a, b] });
  });
});
