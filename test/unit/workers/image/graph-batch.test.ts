// Stacking rows into a batch tensor, and chunked runs for graphs with a fixed batch dim.
import { describe, expect, test } from "bun:test";
import { runInChunks, stack, unstack } from "../../../../workers/image/graph-batch.ts";

describe("stack / unstack", () => {
  test("round trip, and rows own their memory", () => {
    const data = stack([Float32Array.of(1, 2), Float32Array.of(3, 4)]);
    expect(Array.from(data)).toEqual([1, 2, 3, 4]);
    const rows = unstack(data, 2);
    data[0] = 9;
    expect(rows.map((r) => Array.from(r))).toEqual([[1, 2], [3, 4]]);
  });

  test("refuses rows of different sizes", () => {
    expect(() => stack([new Float32Array(2), new Float32Array(3)])).toThrow("rows differ");
  });
});

describe("runInChunks", () => {
  test("one call when the batch is dynamic", async () => {
    const calls: number[][] = [];
    const out = await runInChunks([1, 2, 3], null, async (c) => (calls.push(c), c.map((x) => x * 10)));
    expect([calls, out]).toEqual([[[1, 2, 3]], [10, 20, 30]]);
  });

  test("chunks of exactly the fixed batch, the last padded with its last row and its padding dropped", async () => {
    const calls: number[][] = [];
    const out = await runInChunks([1, 2, 3], 2, async (c) => (calls.push(c), c.map((x) => x * 10)));
    expect(calls).toEqual([[1, 2], [3, 3]]);
    expect(out).toEqual([10, 20, 30]);
  });
});
