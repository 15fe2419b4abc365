import { describe, expect, test } from "bun:test";
import { arrangeHost, type BatchKv, compactRows, gatherRows, type KvTensor, rebuildBatch, rowRoom, withCapacity, writeColumns } from "../../../workers/text/kv-cache.ts";
import { kvPool } from "../../../workers/text/kv-pool.ts";
import { releaseReplacedKv } from "../../../workers/text/release-buffer.ts";

/** rebuildBatch of every row of `a`, then every row of `b` (a join). */
const mergeBatches = (a: BatchKv, b: BatchKv) => rebuildBatch([...a.lens.map((_, row) => ({ kv: a, row })), ...b.lens.map((_, row) => ({ kv: b, row }))])!;
/** rebuildBatch of the rows `keep` of `kv`, in that order (leaves and reorders). */
const removeRows = (kv: BatchKv, keep: number[]) => rebuildBatch(keep.map((row) => ({ kv, row })));
/** rebuildBatch of every row of `kv` (drops leading columns that are padding in every row). */
const trimBatch = (kv: BatchKv) => rebuildBatch(kv.lens.map((_, row) => ({ kv, row })))!;

/** A [B, H, T, D] tensor whose value at (b, h, t, d) is b*1000 + h*100 + t*10 + d, so every copy is traceable. */
function tensor(B: number, H: number, T: number, D: number, base = 0): KvTensor {
  const data = new Float32Array(B * H * T * D);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) for (let t = 0; t < T; t++) for (let d = 0; d < D; d++) data[((b * H + h) * T + t) * D + d] = base + b * 1000 + h * 100 + t * 10 + d;
  return { data, dims: [B, H, T, D] };
}

const at = (t: KvTensor, b: number, h: number, col: number, d: number) => {
  const [, H, T, D] = t.dims;
  return t.data[((b * H + h) * T + col) * D + d];
};

/** Row b, head h of a tensor as a list of columns, each a list over head_dim. */
const columns = (t: KvTensor, b: number, h: number) => Array.from({ length: t.dims[2] }, (_, col) => Array.from({ length: t.dims[3] }, (_, d) => at(t, b, h, col, d)));

describe("gatherRows", () => {
  test("right-aligns each row's last len columns and zero-pads the left", () => {
    const src = tensor(2, 1, 3, 2);
    const out = gatherRows([{ tensor: src, row: 1, len: 2 }, { tensor: src, row: 0, len: 3 }], 4, 1, 2);
    expect(out.dims).toEqual([2, 1, 4, 2]);
    expect(columns(out, 0, 0)).toEqual([[0, 0], [0, 0], [1010, 1011], [1020, 1021]]);
    expect(columns(out, 1, 0)).toEqual([[0, 0], [0, 1], [10, 11], [20, 21]]);
  });

  test("keeps heads apart", () => {
    const out = gatherRows([{ tensor: tensor(1, 2, 2, 1), row: 0, len: 1 }], 2, 2, 1);
    expect(Array.from(out.data)).toEqual([0, 10, 0, 110]);
  });

  test("refuses rows that do not fit or shapes that differ", () => {
    expect(() => gatherRows([{ tensor: tensor(1, 1, 2, 1), row: 0, len: 3 }], 3, 1, 1)).toThrow("does not fit");
    expect(() => gatherRows([{ tensor: tensor(1, 1, 2, 1), row: 1, len: 1 }], 2, 1, 1)).toThrow("out of range");
    expect(() => gatherRows([{ tensor: tensor(1, 2, 2, 1), row: 0, len: 1 }], 2, 1, 1)).toThrow("shape mismatch");
  });
});

/** A one-layer batch (key and value tensors) whose rows have the given true lengths. */
function batch(lens: number[], length: number, base = 0): BatchKv {
  return { tensors: [tensor(lens.length, 1, length, 1, base), tensor(lens.length, 1, length, 1, base + 0.5)], lens, length };
}

describe("rebuildBatch, joining two batches", () => {
  test("left-pads the shorter batch's rows to the longer length", () => {
    const a = batch([3, 2], 3);
    const b = batch([1], 1, 50000);
    const m = mergeBatches(a, b);
    expect(m.lens).toEqual([3, 2, 1]);
    expect(m.length).toBe(3);
    expect(Array.from(m.tensors[0]!.data)).toEqual([0, 10, 20, 0, 1010, 1020, 0, 0, 50000]);
    expect(Array.from(m.tensors[1]!.data)).toEqual([0.5, 10.5, 20.5, 0, 1010.5, 1020.5, 0, 0, 50000.5]);
  });

  test("a longer newcomer pads the running rows instead", () => {
    const m = mergeBatches(batch([1], 1), batch([3], 3, 7000));
    expect(m.length).toBe(3);
    expect(Array.from(m.tensors[0]!.data)).toEqual([0, 0, 0, 7000, 7010, 7020]);
  });
});

describe("rebuildBatch, keeping some rows", () => {
  test("drops rows and trims columns masked in every remaining row", () => {
    // Row 0 is the only one that needed 4 columns; without it two columns suffice.
    const kv = batch([4, 2, 1], 4);
    const r = removeRows(kv, [1, 2])!;
    expect(r.lens).toEqual([2, 1]);
    expect(r.length).toBe(2);
    expect(Array.from(r.tensors[0]!.data)).toEqual([1020, 1030, 0, 2030]);
  });

  test("keeps the requested order and returns null when nothing is left", () => {
    const kv = batch([2, 2], 2);
    expect(Array.from(removeRows(kv, [1, 0])!.tensors[0]!.data)).toEqual([1000, 1010, 0, 10]);
    expect(removeRows(kv, [])).toBeNull();
  });
});

describe("rebuildBatch of a whole batch", () => {
  test("trimming removes only all-padding leading columns", () => {
    const kv = batch([3, 2], 5);
    const t = trimBatch(kv);
    expect(t.length).toBe(3);
    expect(Array.from(t.tensors[0]!.data)).toEqual([20, 30, 40, 0, 1030, 1040]);
  });

  test("an unchanged, untrimmed batch is reused without copying", () => {
    const kv = batch([3, 1], 3);
    expect(rebuildBatch([{ kv, row: 0 }, { kv, row: 1 }])).toBe(kv);
    expect(trimBatch(kv)).toBe(kv);
  });

  test("float16 caches travel as 16-bit words", () => {
    const kv: BatchKv = { tensors: [{ data: Uint16Array.of(1, 2, 3), dims: [1, 1, 3, 1] }], lens: [2], length: 3 };
    const t = trimBatch(kv);
    expect(t.tensors[0]!.data).toBeInstanceOf(Uint16Array);
    expect(Array.from(t.tensors[0]!.data)).toEqual([2, 3]);
  });
});

describe("compactRows", () => {
  test("fills holes with rows from the end, in place, and reports where each row came from", () => {
    const kv = batch([2, 2, 1, 2, 1], 2);
    const before = kv.tensors[0]!.data;
    const { kv: out, from } = compactRows(kv, [0, 2, 3, 4]);
    expect(from).toEqual([0, 4, 2, 3]);
    expect(out.lens).toEqual([2, 1, 1, 2]);
    expect(out.length).toBe(2);
    expect(out.tensors[0]!.dims).toEqual([4, 1, 2, 1]);
    expect(Array.from(out.tensors[0]!.data)).toEqual([0, 10, 4000, 4010, 2000, 2010, 3000, 3010]);
    expect(Array.from(out.tensors[1]!.data)).toEqual([0.5, 10.5, 4000.5, 4010.5, 2000.5, 2010.5, 3000.5, 3010.5]);
    // Same memory: nothing was reallocated.
    expect(out.tensors[0]!.data.buffer).toBe(before.buffer);
  });

  test("dropping only trailing rows moves nothing", () => {
    const kv = batch([1, 2, 2], 2);
    const { kv: out, from } = compactRows(kv, [0, 1]);
    expect(from).toEqual([0, 1]);
    expect(Array.from(out.tensors[0]!.data)).toEqual([0, 10, 1000, 1010]);
  });

  test("several holes take movers from the end in turn", () => {
    const kv = batch([1, 1, 1, 1, 1, 1], 1);
    const { kv: out, from } = compactRows(kv, [5, 2, 4]);
    expect(from).toEqual([5, 4, 2]);
    expect(Array.from(out.tensors[0]!.data)).toEqual([5000, 4000, 2000]);
  });
});

describe("a cache with spare columns (kept in place)", () => {
  test("withCapacity keeps the used columns at their indices and adds max(32, n/8) spare ones, only when short", () => {
    const kv: BatchKv = { tensors: [tensor(2, 2, 3, 2)], lens: [3, 2], length: 3 };
    expect(withCapacity(kv, 3)).toBe(kv);
    const grown = withCapacity(kv, 4);
    expect(grown.tensors[0]!.dims).toEqual([2, 2, 4 + 32, 2]);
    expect(grown.lens).toEqual([3, 2]);
    expect(grown.length).toBe(3);
    for (const [b, h] of [[0, 0], [1, 1]] as const) {
      expect(columns(grown.tensors[0]!, b, h).slice(0, 3)).toEqual(columns(kv.tensors[0]!, b, h));
      expect(columns(grown.tensors[0]!, b, h)[3]).toEqual([0, 0]);
    }
    expect(withCapacity({ tensors: [tensor(1, 1, 0, 1)], lens: [], length: 0 }, 400).tensors[0]!.dims[2]).toBe(450);
    // Columns past `length` are spare even when the tensor holds data there: only the used ones are carried over.
    const partly: BatchKv = { tensors: [tensor(1, 1, 3, 1)], lens: [2], length: 2 };
    expect(Array.from(withCapacity(partly, 4).tensors[0]!.data.subarray(0, 3))).toEqual([0, 10, 0]);
  });

  test("writeColumns puts [batch, seqLen, heads·dim] values at columns at..at+seqLen of every row and head", () => {
    const into: KvTensor = { data: new Float32Array(2 * 2 * 5 * 2), dims: [2, 2, 5, 2] };
    // value = b·1000 + s·100 + h·10 + d
    const fresh = Float32Array.from({ length: 2 * 2 * 2 * 2 }, (_, i) => {
      const d = i % 2, h = (i >> 1) % 2, s = (i >> 2) % 2, b = i >> 3;
      return b * 1000 + s * 100 + h * 10 + d;
    });
    writeColumns(into, fresh, 2, 3);
    expect(columns(into, 1, 1)).toEqual([[0, 0], [0, 0], [0, 0], [1010, 1011], [1110, 1111]]);
    expect(columns(into, 0, 0)).toEqual([[0, 0], [0, 0], [0, 0], [0, 1], [100, 101]]);
    expect(() => writeColumns(into, fresh, 2, 4)).toThrow("exceed capacity");
    expect(() => writeColumns(into, fresh.subarray(1), 2, 0)).toThrow("expected 16");
    expect(() => writeColumns(into, new Uint16Array(16), 2, 0)).toThrow("element type");
  });

  test("rebuilding reads each row's columns before the batch's length, not before the tensor's end", () => {
    const kv: BatchKv = { tensors: [tensor(2, 1, 6, 1)], lens: [3, 1], length: 4 };
    const out = rebuildBatch([{ kv, row: 1 }, { kv, row: 0 }])!;
    expect(out.length).toBe(3);
    expect(out.tensors[0]!.dims).toEqual([2, 1, 3, 1]);
    expect(columns(out.tensors[0]!, 0, 0)).toEqual([[0], [0], [1030]]);
    expect(columns(out.tensors[0]!, 1, 0)).toEqual([[10], [20], [30]]);
    expect(() => gatherRows([{ tensor: tensor(1, 1, 2, 1), row: 0, len: 1, end: 3 }], 2, 1, 1)).toThrow("does not fit");
  });
});

describe("arrangeHost with room (joins copied into spare rows)", () => {
  const room = { rows: 4, spareColumns: true };
  /** A batch of `rows` from two sources, rebuilt with room. */
  const rebuilt = () => {
    const a: BatchKv = { tensors: [tensor(1, 2, 3, 2), tensor(1, 2, 3, 2, 50_000)], lens: [3], length: 3 };
    const b: BatchKv = { tensors: [tensor(1, 2, 2, 2, 7000), tensor(1, 2, 2, 2, 57_000)], lens: [2], length: 2 };
    return { a, b, ...arrangeHost([{ kv: a, row: 0 }, { kv: b, row: 0 }], room) };
  };

  test("a rebuild keeps room for the whole batch and spare columns for the next pass, neither resident until written", () => {
    const { kv, order } = rebuilt();
    expect(order).toEqual([0, 1]);
    expect(kv!.tensors[0]!.dims).toEqual([2, 2, 4 + 32, 2]);
    expect(kv!.tensors.map(rowRoom)).toEqual([4, 4]);
    expect(kv!.length).toBe(3);
    expect(columns(kv!.tensors[0]!, 1, 1).slice(0, 3)).toEqual([[0, 0], [7100, 7101], [7110, 7111]]);
    // Without room (a runner that feeds its cache whole): exactly the batch, as before.
    const a: BatchKv = { tensors: [tensor(1, 1, 3, 1)], lens: [3], length: 3 };
    const plain = arrangeHost([{ kv: a, row: 0 }, { kv: { tensors: [tensor(1, 1, 2, 1)], lens: [2], length: 2 }, row: 0 }]).kv!;
    expect([plain.tensors[0]!.dims, rowRoom(plain.tensors[0]!)]).toEqual([[2, 1, 3, 1], 2]);
  });

  test("a newcomer that fits is written into a spare row in place: the rows already there are not copied, a former occupant's columns are cleared", () => {
    const { kv: batch } = rebuilt();
    const buffer = batch!.tensors[0]!.data.buffer;
    // Row 1 leaves and a newcomer takes its place: row 0 stays where it is, row 1's old columns are cleared.
    const newcomer: BatchKv = { tensors: [tensor(2, 2, 2, 2, 9000), tensor(2, 2, 2, 2, 59_000)], lens: [1, 2], length: 2 };
    expect(columns(batch!.tensors[0]!, 1, 0).slice(0, 3)).toEqual([[0, 0], [7000, 7001], [7010, 7011]]);
    const { kv, order } = arrangeHost([{ kv: batch!, row: 0 }, { kv: newcomer, row: 0 }, { kv: newcomer, row: 1 }], room);
    expect(order).toEqual([0, 1, 2]);
    expect(kv!.tensors[0]!.data.buffer).toBe(buffer);
    expect(kv!.tensors[0]!.dims).toEqual([3, 2, 36, 2]);
    expect([kv!.lens, kv!.length]).toEqual([[3, 1, 2], 3]);
    expect(columns(kv!.tensors[0]!, 0, 1).slice(0, 3)).toEqual([[100, 101], [110, 111], [120, 121]]);
    expect(columns(kv!.tensors[0]!, 1, 0).slice(0, 3)).toEqual([[0, 0], [0, 0], [9010, 9011]]);
    expect(columns(kv!.tensors[1]!, 2, 1).slice(0, 3)).toEqual([[0, 0], [60_100, 60_101], [60_110, 60_111]]);
  });

  test("a newcomer longer than the batch, rows beyond the room, or rows of a buffer allocated elsewhere: rebuilt", () => {
    const { kv: batch } = rebuilt();
    const buffer = batch!.tensors[0]!.data.buffer;
    const long: BatchKv = { tensors: [tensor(1, 2, 5, 2), tensor(1, 2, 5, 2)], lens: [5], length: 5 };
    const grown = arrangeHost([{ kv: batch!, row: 0 }, { kv: batch!, row: 1 }, { kv: long, row: 0 }], room).kv!;
    expect(grown.tensors[0]!.data.buffer).not.toBe(buffer);
    expect([grown.lens, grown.length]).toEqual([[3, 2, 5], 5]);
    expect(columns(grown.tensors[0]!, 0, 0).slice(0, 5)).toEqual([[0, 0], [0, 0], [0, 1], [10, 11], [20, 21]]);
    const three: BatchKv = { tensors: [tensor(3, 2, 1, 2), tensor(3, 2, 1, 2)], lens: [1, 1, 1], length: 1 };
    const full = arrangeHost([0, 1].map((row) => ({ kv: batch!, row })).concat([0, 1, 2].map((row) => ({ kv: three, row }))), room).kv!;
    expect([full.tensors[0]!.data.buffer === buffer, full.lens.length, rowRoom(full.tensors[0]!)]).toEqual([false, 5, 5]);
    // An ONNX Runtime output or a block may hold other data after its rows: it is never written past its batch.
    const shared = new Float32Array(64).fill(7);
    const foreign: BatchKv = { tensors: [{ data: shared.subarray(0, 4), dims: [1, 1, 4, 1] }], lens: [4], length: 4 };
    const joined = arrangeHost([{ kv: foreign, row: 0 }, { kv: { tensors: [tensor(1, 1, 2, 1)], lens: [2], length: 2 }, row: 0 }], room).kv!;
    expect([rowRoom(foreign.tensors[0]!), joined.tensors[0]!.data.buffer === shared.buffer, shared[4]]).toEqual([1, false, 7]);
  });

  test("a buffer back from the pool holds an earlier batch's values: a rebuild zeroes its rows' padding and spare columns, a join clears a spare row whole", () => {
    kvPool.clear();
    const { kv: first } = rebuilt();
    const dirty = first!.tensors.map((t) => t.data.buffer);
    for (const b of dirty) new Float32Array(b).fill(5);
    releaseReplacedKv([first], []);
    const { kv } = rebuilt();
    expect(kv!.tensors.map((t) => dirty.includes(t.data.buffer))).toEqual([true, true]);
    const zeros = (n: number) => Array.from({ length: n }, () => [0, 0]);
    // Row 1 holds 2 of the 3 columns: its first is padding; both rows' 33 spare columns are zero.
    expect(columns(kv!.tensors[0]!, 1, 1)).toEqual([[0, 0], [7100, 7101], [7110, 7111], ...zeros(33)]);
    expect(columns(kv!.tensors[1]!, 0, 0).slice(3)).toEqual(zeros(33));
    // A newcomer of 1 column joins in spare row 2, which still holds 5s: all of that row but its column is cleared.
    const one: BatchKv = { tensors: [tensor(1, 2, 1, 2, 9000), tensor(1, 2, 1, 2, 59_000)], lens: [1], length: 1 };
    const joined = arrangeHost([{ kv: kv!, row: 0 }, { kv: kv!, row: 1 }, { kv: one, row: 0 }], room).kv!;
    expect(joined.tensors[0]!.data.buffer).toBe(kv!.tensors[0]!.data.buffer);
    expect(columns(joined.tensors[0]!, 2, 1)).toEqual([[0, 0], [0, 0], [9100, 9101], ...zeros(33)]);
    expect(columns(joined.tensors[1]!, 2, 0)).toEqual([[0, 0], [0, 0], [59_000, 59_001], ...zeros(33)]);
  });

  test("withCapacity keeps a cache's spare rows when it grows", () => {
    const { kv } = rebuilt();
    const grown = withCapacity(kv!, 40);
    expect([grown.tensors[0]!.dims, rowRoom(grown.tensors[0]!)]).toEqual([[2, 2, 72, 2], 4]);
    expect(columns(grown.tensors[0]!, 1, 1).slice(0, 3)).toEqual(columns(kv!.tensors[0]!, 1, 1).slice(0, 3));
  });
});
