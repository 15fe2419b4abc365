// Copies between a batch's KV and blocks: a row's positions out, blocks back into a right-aligned past.
import { describe, expect, test } from "bun:test";
import { extractColumns, pastFromBlocks, shapeOf } from "../../../../workers/text/kv-blocks.ts";
import type { BatchKv } from "../../../../workers/text/kv-cache.ts";
import { kvPool } from "../../../../workers/text/kv-pool.ts";
import { releaseReplacedKv } from "../../../../workers/text/release-buffer.ts";

/** A batch whose value at (row, head, column, d) spells all four, with rows right-aligned at `length`. */
function batch(lens: number[], length: number, cap: number, heads = 2, dim = 3): BatchKv {
  const data = new Float32Array(lens.length * heads * cap * dim);
  for (let r = 0; r < lens.length; r++)
    for (let h = 0; h < heads; h++)
      for (let c = 0; c < cap; c++) for (let d = 0; d < dim; d++) data[((r * heads + h) * cap + c) * dim + d] = r * 1000 + h * 100 + c * 10 + d;
  return { tensors: [{ data, dims: [lens.length, heads, cap, dim] }, { data: data.map((x) => -x), dims: [lens.length, heads, cap, dim] }], lens, length };
}

describe("kv blocks", () => {
  test("extractColumns reads a row's positions from where the batch right-aligns them, per head", () => {
    const kv = batch([3, 5], 5, 8);
    const [k, v] = extractColumns(kv, 0, 1, 2);
    // Row 0 holds 3 positions in columns 2..4: positions 1..2 are columns 3..4.
    expect(Array.from(k!)).toEqual([30, 31, 32, 40, 41, 42, 130, 131, 132, 140, 141, 142]);
    expect(Array.from(v!)).toEqual(Array.from(k!, (x) => -x));
    expect(() => extractColumns(kv, 0, 2, 2)).toThrow(/outside/);
    expect(shapeOf(kv)).toEqual({ heads: 2, headDim: 3, float16: false });
  });

  test("pastFromBlocks right-aligns each row's first len positions, zero on the left, no spare columns", () => {
    const kv = batch([6], 6, 6, 1, 1);
    const blockA = { kv: extractColumns(kv, 0, 0, 4), tokens: 4 };
    const blockB = { kv: extractColumns(kv, 0, 4, 2), tokens: 2 };
    const past = pastFromBlocks([{ blocks: [blockA, blockB], len: 5 }, { blocks: [blockA], len: 2 }], 2, shapeOf(kv));
    expect(past.lens).toEqual([5, 2]);
    expect(past.length).toBe(5);
    expect(past.tensors[0]!.dims).toEqual([2, 1, 5, 1]);
    expect(Array.from(past.tensors[0]!.data)).toEqual([0, 10, 20, 30, 40, 0, 0, 0, 0, 10]);
    expect(() => pastFromBlocks([{ blocks: [blockB], len: 3 }], 2, shapeOf(kv))).toThrow(/hold 2 positions/);
  });

  test("pastFromBlocks with room: spare zero columns after the past, for the pass's new ones", () => {
    const kv = batch([6], 6, 6, 1, 1);
    const block = { kv: extractColumns(kv, 0, 0, 4), tokens: 4 };
    const past = pastFromBlocks([{ blocks: [block], len: 4 }, { blocks: [block], len: 2 }], 2, shapeOf(kv), 3);
    expect([past.tensors[0]!.dims, past.length, past.lens]).toEqual([[2, 1, 7, 1], 4, [4, 2]]);
    expect(Array.from(past.tensors[0]!.data)).toEqual([0, 10, 20, 30, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0]);
  });

  test("a past built in buffers back from the pool, still holding an earlier cache's values, has zeros in its padding and spare columns", () => {
    kvPool.clear();
    const kv = batch([6], 6, 6, 1, 1);
    const block = { kv: extractColumns(kv, 0, 0, 4), tokens: 4 };
    const rows = [{ blocks: [block], len: 4 }, { blocks: [block], len: 1 }];
    const first = pastFromBlocks(rows, 2, shapeOf(kv), 2);
    for (const t of first.tensors) t.data.fill(-7);
    releaseReplacedKv([first], []);
    const past = pastFromBlocks(rows, 2, shapeOf(kv), 2);
    expect(past.tensors.map((t) => t.data.buffer === first.tensors[0]!.data.buffer || t.data.buffer === first.tensors[1]!.data.buffer)).toEqual([true, true]);
    expect(Array.from(past.tensors[0]!.data)).toEqual([0, 10, 20, 30, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(Array.from(past.tensors[1]!.data)).toEqual([-0, -10, -20, -30, 0, 0, 0, 0, 0, -0, 0, 0]);
  });
});
