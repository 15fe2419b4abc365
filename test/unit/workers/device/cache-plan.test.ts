// The device cache's pure planning: capacities, runs of rows per source, unpadding a prefill, GQA's length inputs.
import { describe, expect, test } from "bun:test";
import { attentionLengths, capacityFor, isWhole, rightPaddedMask, runsOf, unpadRows } from "../../../../workers/text/device/cache-plan.ts";

describe("capacityFor", () => {
  test("the need plus max(32, need/8), rounded up to 32", () => {
    expect(capacityFor(1, 4096)).toBe(64);
    expect(capacityFor(9, 4096)).toBe(64);
    expect(capacityFor(33, 4096)).toBe(96);
    expect(capacityFor(1000, 4096)).toBe(1152);
  });
  test("never past the context length, unless the need itself is", () => {
    expect(capacityFor(100, 120)).toBe(120);
    expect(capacityFor(130, 120)).toBe(130);
  });
});

describe("runsOf and isWhole", () => {
  test("consecutive rows of one source make one run, in order", () => {
    const picks = [{ source: 0, row: 2 }, { source: 0, row: 0 }, { source: 1, row: 0 }, { source: 1, row: 1 }, { source: 0, row: 1 }];
    expect(runsOf(picks)).toEqual([{ source: 0, rows: [2, 0] }, { source: 1, rows: [0, 1] }, { source: 0, rows: [1] }]);
    expect(runsOf([])).toEqual([]);
  });
  test("whole: every row of source 0 in order, nothing else", () => {
    expect(isWhole([{ source: 0, row: 0 }, { source: 0, row: 1 }], 2)).toBe(true);
    expect(isWhole([{ source: 0, row: 1 }, { source: 0, row: 0 }], 2)).toBe(false);
    expect(isWhole([{ source: 0, row: 0 }], 2)).toBe(false);
    expect(isWhole([{ source: 0, row: 0 }, { source: 1, row: 0 }], 2)).toBe(false);
  });
});

describe("unpadRows", () => {
  test("each row's real tokens, left padding dropped", () => {
    const ids = BigInt64Array.from([9, 9, 5, 6, 1, 2, 3, 4].map(BigInt));
    const mask = BigInt64Array.from([0, 0, 1, 1, 1, 1, 1, 1].map(BigInt));
    expect(unpadRows(ids, mask, 2, 4).map((r) => [...r].map(Number))).toEqual([[5, 6], [1, 2, 3, 4]]);
  });
  test("a row without tokens, or inputs of the wrong size, are refused", () => {
    expect(() => unpadRows(new BigInt64Array(2), new BigInt64Array(2), 1, 2)).toThrow("prefill row 0 has no token");
    expect(() => unpadRows(new BigInt64Array(3), new BigInt64Array(4), 2, 2)).toThrow("2 × 2");
  });
});

describe("GroupQueryAttention's lengths", () => {
  test("seqlens_k is each row's total − 1; total is the longest", () => {
    const { seqlensK, total } = attentionLengths([4, 0, 9], 1);
    expect([...seqlensK]).toEqual([4, 0, 9]);
    expect(total).toBe(10);
    expect([...attentionLengths([6], 3).seqlensK]).toEqual([8]);
  });
  test("a right-padded mask of total columns for graphs that derive them", () => {
    const { mask, total } = rightPaddedMask([2, 0], 1);
    expect(total).toBe(3);
    expect([...mask].map(Number)).toEqual([1, 1, 1, 1, 0, 0]);
  });
});
