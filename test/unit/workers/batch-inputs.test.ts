import { describe, expect, test } from "bun:test";
import { chunkInputs, decodeInputs, prefillInputs } from "../../../workers/engine/batch-inputs.ts";

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
