// Pure copies between a batch's KV cache and prefix-cache blocks: a row's columns out into blocks, blocks into a past.
import { allocRows, type BatchKv, type KvData, type KvTensor } from "./kv-cache.ts";

/** The layout every cached tensor shares: KV heads, head size, and whether words are float16. */
export interface BlockShape {
  heads: number;
  headDim: number;
  float16: boolean;
}

export function shapeOf(kv: BatchKv): BlockShape {
  const t = kv.tensors[0];
  if (!t) throw new Error("a batch without KV tensors");
  return { heads: t.dims[1], headDim: t.dims[3], float16: t.data instanceof Uint16Array };
}

/**
 * Positions [from, from + n) of row `row` of a batch, out of every tensor: each [heads, n, headDim], a copy. The row's
 * position p sits in column length − lens[row] + p.
 */
export function extractColumns(kv: BatchKv, row: number, from: number, n: number): KvData[] {
  const len = kv.lens[row];
  if (len === undefined) throw new Error(`row ${row} is not in the batch`);
  if (from < 0 || n < 0 || from + n > len) throw new Error(`positions ${from}..${from + n} are outside the row's ${len}`);
  const col0 = kv.length - len + from;
  // One allocation for every tensor of the block (views into it): a block of a deep model is dozens of tensors.
  const sizes = kv.tensors.map((t) => t.dims[1] * n * t.dims[3]);
  const total = sizes.reduce((a, b) => a + b, 0);
  const all: KvData = kv.tensors[0]?.data instanceof Uint16Array ? new Uint16Array(total) : new Float32Array(total);
  let offset = 0;
  return kv.tensors.map((t, j) => {
    const [batch, heads, cap, dim] = t.dims;
    if (row >= batch) throw new Error(`row ${row} out of range for batch ${batch}`);
    if (t.data.constructor !== all.constructor) throw new Error("kv tensors of different element types");
    const out = all.subarray(offset, offset + sizes[j]!);
    offset += sizes[j]!;
    for (let h = 0; h < heads; h++) {
      const at = ((row * heads + h) * cap + col0) * dim;
      out.set(t.data.subarray(at, at + n * dim), h * n * dim);
    }
    return out;
  });
}

/** One block's tensors ([heads, n, headDim] each) and how many tokens it holds. */
export interface BlockData {
  kv: KvData[];
  tokens: number;
}

/**
 * A past cache from blocks: row r takes the first lens[r] positions of its blocks (in order), right-aligned at the
 * longest row with masked zero columns on the left, the layout of a batch (kv-cache.ts). `room` spare columns after
 * them, zero, are for the pass's new columns, which a runner writing in place puts there: its cache is then not copied
 * to grow after the pass (the pass attends to them masked).
 */
export function pastFromBlocks(rows: { blocks: BlockData[]; len: number }[], layers: number, shape: BlockShape, room = 0): BatchKv {
  const { heads, headDim: dim } = shape;
  const length = Math.max(0, ...rows.map((r) => r.len));
  const cap = length + room;
  const tensors: KvTensor[] = [];
  for (let j = 0; j < layers; j++) {
    // Every value is written below: the blocks' columns, and zeros in each row's padding and spare columns.
    const data = allocRows(shape.float16, [rows.length, heads, cap, dim], rows.length, false);
    rows.forEach(({ blocks, len }, r) => {
      for (let h = 0; h < heads; h++) {
        const start = (r * heads + h) * cap * dim;
        data.fill(0, start, start + (length - len) * dim);
        data.fill(0, start + length * dim, start + cap * dim);
      }
      let at = 0;
      for (const block of blocks) {
        if (at >= len) break;
        const take = Math.min(block.tokens, len - at);
        const src = block.kv[j]!;
        if (src.length !== heads * block.tokens * dim) throw new Error(`block holds ${src.length} values, expected ${heads * block.tokens * dim}`);
        for (let h = 0; h < heads; h++) {
          const to = ((r * heads + h) * cap + (length - len) + at) * dim;
          data.set(src.subarray(h * block.tokens * dim, (h * block.tokens + take) * dim), to);
        }
        at += take;
      }
      if (at < len) throw new Error(`blocks hold ${at} positions, the row needs ${len}`);
    });
    tensors.push({ data, dims: [rows.length, heads, cap, dim] });
  }
  return { tensors, lens: rows.map((r) => r.len), length };
}
