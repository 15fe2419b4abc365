// Pure KV-cache reshaping for a continuous batch: rows keep their true content right-aligned at the batch's used
// length, shorter rows left-padded. Tensors may hold spare columns past that length (a cache written in place).
import { kvPool } from "./kv-pool.ts";

/** float32 caches, or float16 ones carried as raw 16-bit words (they are only copied, never read as numbers). */
export type KvData = Float32Array | Uint16Array;

/** One past/present tensor laid out [batch, kvHeads, length, headDim] as the graph produces it. */
export interface KvTensor {
  data: KvData;
  dims: [number, number, number, number];
}

/**
 * Every layer's key and value tensors for one batch, plus each row's true (unpadded) length. `T` is how a runner holds
 * a tensor: host arrays here; a device runner's own handles (workers/text/device/) for caches kept on the GPU.
 */
export interface BatchKv<T = KvTensor> {
  tensors: T[];
  /** lens[r] ≤ length; the row's content is the lens[r] columns before `length`, earlier columns are masked padding. */
  lens: number[];
  /** Columns in use, shared by every row; each tensor's dims[2] is at least this (the rest is spare capacity). */
  length: number;
}

export interface RowRef {
  tensor: KvTensor;
  row: number;
  /** True length of the row: its `len` columns before `end` are copied, the rest is dropped. */
  len: number;
  /** Columns in use in the source tensor (its batch's length); dims[2] when omitted. */
  end?: number;
}

/**
 * Room to allocate beyond a rebuilt batch's needs: `rows` in all (the batch's rows and empty ones after them, which later
 * joins fill in place) and `columns` per row (the used ones plus spare ones a runner writing in place fills). Pages
 * nothing is written to are never touched, so they cost address space, not memory.
 */
export interface KvRoom {
  rows: number;
  columns: number;
}

/**
 * Builds a new tensor from rows of possibly different tensors, each right-aligned in `targetLen` columns, zero-padded on
 * the left; `room` allocates spare rows and columns beyond them (the tensor is a view of its first rows).
 */
export function gatherRows(rows: RowRef[], targetLen: number, heads: number, headDim: number, room?: KvRoom): KvTensor {
  const cap = Math.max(targetLen, room?.columns ?? targetLen);
  const out = allocRows(rows[0]?.tensor.data instanceof Uint16Array, [rows.length, heads, cap, headDim], room?.rows ?? 0);
  rows.forEach((ref, r) => copyRow(out, r, heads, cap, targetLen, headDim, ref, false));
  return { data: out, dims: [rows.length, heads, cap, headDim] };
}

/**
 * Copies row `ref` into row `r` of `out` ([·, heads, cap, headDim]) right-aligned at column `length`; `clear` zeroes
 * the row's other columns (a spare row, which may hold what an earlier user of its buffer wrote).
 */
function copyRow(out: KvData, r: number, heads: number, cap: number, length: number, headDim: number, ref: RowRef, clear: boolean): void {
  const [batch, h, srcLen, d] = ref.tensor.dims;
  if (h !== heads || d !== headDim) throw new Error(`kv shape mismatch: [${ref.tensor.dims}] vs heads ${heads}, head_dim ${headDim}`);
  if (ref.row < 0 || ref.row >= batch) throw new Error(`kv row ${ref.row} out of range for batch ${batch}`);
  const end = ref.end ?? srcLen;
  if (end > srcLen || ref.len > end || ref.len > length || ref.len < 0) throw new Error(`kv row length ${ref.len} does not fit (${end} of ${srcLen} → ${length})`);
  if (ref.tensor.data.constructor !== out.constructor) throw new Error("kv tensors of different element types cannot merge");
  const span = ref.len * headDim;
  for (let head = 0; head < heads; head++) {
    // Within one (row, head) the columns are contiguous, so each row-head is a single block copy.
    const from = ((ref.row * heads + head) * srcLen + (end - ref.len)) * headDim;
    const start = (r * heads + head) * cap * headDim;
    const to = start + (length - ref.len) * headDim;
    if (clear) {
      out.fill(0, start, to);
      out.fill(0, to + span, start + cap * headDim);
    }
    out.set(ref.tensor.data.subarray(from, from + span), to);
  }
}

/**
 * The rows each buffer this module allocated holds (at the column capacity it was made with). Only these are written
 * past their batch: a buffer from elsewhere (an ONNX Runtime output, a prefix-cache block) may hold other data after it.
 */
const spareRows = new WeakMap<ArrayBufferLike, number>();

/**
 * A cache tensor's array for `dims` ([batch, heads, cap, headDim]) with room for `roomRows` rows in all (at least the
 * batch), from the worker's buffer pool: the batch's rows are zero unless `zeroed` is false (the caller writes every
 * value of them); spare rows may hold an earlier user's values until a join clears them (copyRow).
 */
export function allocRows(float16: boolean, dims: readonly [number, number, number, number], roomRows: number, zeroed = true): KvData {
  const [batch, heads, cap, dim] = dims;
  const rows = Math.max(batch, roomRows);
  const used = batch * heads * cap * dim;
  const all = kvPool.take(float16, rows * heads * cap * dim, zeroed ? used : 0);
  spareRows.set(all.buffer, rows);
  return all.subarray(0, used);
}

/** Rows a tensor's buffer holds at its column capacity: more than its batch when this module allocated it with spare rows. */
export function rowRoom(t: KvTensor): number {
  const batch = t.dims[0];
  return t.data.byteOffset === 0 ? Math.max(batch, spareRows.get(t.data.buffer) ?? 0) : batch;
}

/** A row of some batch, named by the batch it comes from and its index there. */
export interface BatchRow<T = KvTensor> {
  kv: BatchKv<T>;
  row: number;
}

/** A batch made from rows: new row i holds rows[order[i]] (null when no row is left). */
export interface Arranged<T = KvTensor> {
  kv: BatchKv<T> | null;
  order: number[];
}

/**
 * The host cache's arrangement of the next batch. Rows of a single batch are compacted in place (leaves cost one row
 * copy each, and the rows' order changes). Rows of other batches after them (joins) are copied into the batch's spare
 * rows when they fit its length and its room; otherwise, or when `room` is absent, the batch is rebuilt (every row
 * copied), with `room` for later joins and, for a runner that writes new columns in place, spare columns.
 */
export function arrangeHost(rows: BatchRow[], room?: { rows: number; spareColumns: boolean }): Arranged {
  const source = rows[0]?.kv;
  const own = rows.findIndex((r) => r.kv !== source);
  const kept = own < 0 ? rows : rows.slice(0, own);
  const joining = own < 0 ? [] : rows.slice(own);
  const rebuilt = (of: BatchRow[]) => rebuildBatch(of, room && roomFor(of, room));
  const rebuild = (): Arranged => ({ kv: rebuilt(rows), order: rows.map((_, i) => i) });
  if (!source || joining.some((r) => r.kv === source)) return rebuild();
  // Newcomers that fit the batch's columns and its buffer's spare rows are copied in; its own rows stay where they are.
  if (joining.length > 0 && !fitsInPlace(source, kept.length, joining)) return rebuild();
  const { kv: compacted, from } = compactRows(source, kept.map((r) => r.row));
  const kv = joining.length > 0 ? joinInPlace(compacted, joining) : compacted;
  const indexOf = new Map(kept.map((r, i) => [r.row, i]));
  const order = [...from.map((r) => indexOf.get(r)!), ...joining.map((_, i) => kept.length + i)];
  // Leading columns no row needs any more still cost compute every step: drop them once they are worth a copy.
  const waste = kv.length - Math.max(...kv.lens);
  if (waste > 0 && waste * 8 >= kv.length) return { kv: rebuilt(kv.lens.map((_, row) => ({ kv, row }))), order };
  return { kv, order };
}

/** The room a rebuilt batch of `rows` gets: spare rows up to `rows`, spare columns for a runner that writes in place. */
function roomFor(rows: BatchRow[], room: { rows: number; spareColumns: boolean }): KvRoom {
  const length = Math.max(0, ...rows.map(({ kv, row }) => kv.lens[row] ?? 0));
  return { rows: room.rows, columns: room.spareColumns ? grownCapacity(length + 1) : length };
}

/**
 * Whether rows of other batches can be written into `source`'s spare rows after its first `keep` rows: there is room,
 * and none is longer than the batch. (Shapes and element types are checked by the copy, as a rebuild's are.)
 */
function fitsInPlace(source: BatchKv, keep: number, joining: BatchRow[]): boolean {
  if (source.tensors.length === 0 || keep === 0) return false;
  return (
    source.tensors.every((t) => rowRoom(t) >= keep + joining.length) &&
    joining.every(({ kv, row }) => kv.tensors.length === source.tensors.length && (kv.lens[row] ?? Infinity) <= source.length)
  );
}

/** `kv` with `joining` written into the rows after its own (its buffers' spare rows), right-aligned at its length. */
function joinInPlace(kv: BatchKv, joining: BatchRow[]): BatchKv {
  const base = kv.lens.length;
  const rows = base + joining.length;
  const tensors = kv.tensors.map((t, j) => {
    const [, heads, cap, dim] = t.dims;
    const data = new (t.data.constructor as Float32ArrayConstructor)(t.data.buffer, 0, rows * heads * cap * dim) as KvData;
    joining.forEach(({ kv: src, row }, i) => copyRow(data, base + i, heads, cap, kv.length, dim, { tensor: src.tensors[j]!, row, len: src.lens[row]!, end: src.length }, true));
    return { data, dims: [rows, heads, cap, dim] as KvTensor["dims"] };
  });
  return { tensors, lens: [...kv.lens, ...joining.map(({ kv: src, row }) => src.lens[row]!)], length: kv.length };
}

/**
 * Assembles a batch from rows of one or more batches (joins, leaves and reorders are all this).
 * The result is exactly as long as its longest row: leading columns masked in every row are trimmed.
 */
export function rebuildBatch(rows: BatchRow[], room?: KvRoom): BatchKv | null {
  if (rows.length === 0) return null;
  const first = rows[0]!.kv;
  // Keeping every row of one batch, in order, with nothing to trim needs no copy: reuse its tensors.
  const whole = rows.length === first.lens.length && rows.every((r, i) => r.kv === first && r.row === i);
  if (whole && Math.max(...first.lens) === first.length) return first;
  const layers = first.tensors.length;
  const lens = rows.map(({ kv, row }) => {
    if (kv.tensors.length !== layers) throw new Error("batches with different layer counts cannot merge");
    const len = kv.lens[row];
    if (len === undefined) throw new Error(`row ${row} is not in its batch`);
    return len;
  });
  const length = Math.max(...lens);
  const tensors: KvTensor[] = [];
  for (let j = 0; j < layers; j++) {
    const [, heads, , headDim] = first.tensors[j]!.dims;
    tensors.push(gatherRows(rows.map(({ kv, row }, r) => ({ tensor: kv.tensors[j]!, row, len: lens[r]!, end: kv.length })), length, heads, headDim, room));
  }
  return { tensors, lens, length };
}

/**
 * Drops rows without reallocating: each hole left below the new batch size is filled by moving a surviving row from
 * the end into it, and the tensors become views of their first rows. Costs one row copy per hole instead of a
 * whole-cache copy. `from[r]` is the old index of new row r. Leading padding stays (trim separately when it grows).
 */
export function compactRows(kv: BatchKv, keep: readonly number[]): { kv: BatchKv; from: number[] } {
  const rows = kv.lens.length;
  const kept = new Set(keep);
  const size = kept.size;
  const from = Array.from({ length: size }, (_, r) => r);
  const holes = from.filter((r) => !kept.has(r));
  const movers: number[] = [];
  for (let r = rows - 1; r >= size; r--) if (kept.has(r)) movers.push(r);
  holes.forEach((hole, k) => (from[hole] = movers[k]!));
  const tensors = kv.tensors.map((t) => {
    const [, heads, len, dim] = t.dims;
    const rowSize = heads * len * dim;
    holes.forEach((hole, k) => t.data.copyWithin(hole * rowSize, movers[k]! * rowSize, (movers[k]! + 1) * rowSize));
    return { data: t.data.subarray(0, size * rowSize), dims: [size, heads, len, dim] as KvTensor["dims"] };
  });
  return { kv: { tensors, lens: from.map((r) => kv.lens[r]!), length: kv.length }, from };
}

/**
 * The same batch with room for at least `columns` in-use columns: the tensors themselves when they already have it,
 * otherwise copies with `columns` plus max(32, columns / 8) spare columns (the used ones kept at the same indices), so
 * a cache written in place is copied once every few dozen steps and never carries more than 1/8 unused attention work
 * beyond the last growth.
 */
export function withCapacity(kv: BatchKv, columns: number): BatchKv {
  const cap = kv.tensors[0]?.dims[2] ?? 0;
  if (cap >= columns) return kv;
  const target = grownCapacity(columns);
  const tensors = kv.tensors.map((t) => {
    const [batch, heads, len, dim] = t.dims;
    // Spare rows stay spare rows at the new width (later joins still fit in place).
    const out = allocRows(t.data instanceof Uint16Array, [batch, heads, target, dim], rowRoom(t));
    const used = kv.length * dim;
    for (let bh = 0; bh < batch * heads; bh++) out.set(t.data.subarray(bh * len * dim, bh * len * dim + used), bh * target * dim);
    return { data: out, dims: [batch, heads, target, dim] as KvTensor["dims"] };
  });
  return { tensors, lens: kv.lens, length: kv.length };
}

/** The columns a cache grown to hold `columns` gets: max(32, columns / 8) spare ones beyond them. */
export function grownCapacity(columns: number): number {
  return columns + Math.max(32, Math.ceil(columns / 8));
}

/**
 * Writes a pass's new keys or values, [batch, seqLen, heads · headDim] as the graph's attention inputs hold them,
 * into columns [at, at + seqLen) of `into` ([batch, heads, capacity, headDim]), in place.
 */
export function writeColumns(into: KvTensor, fresh: KvData, seqLen: number, at: number): void {
  const [batch, heads, cap, dim] = into.dims;
  if (at + seqLen > cap) throw new Error(`kv columns ${at}..${at + seqLen} exceed capacity ${cap}`);
  if (fresh.length !== batch * seqLen * heads * dim) throw new Error(`new kv holds ${fresh.length} values, expected ${batch * seqLen * heads * dim}`);
  if (fresh.constructor !== into.data.constructor) throw new Error("new kv and cache differ in element type");
  for (let b = 0; b < batch; b++)
    for (let s = 0; s < seqLen; s++)
      for (let h = 0; h < heads; h++) {
        const from = ((b * seqLen + s) * heads + h) * dim;
        into.data.set(fresh.subarray(from, from + dim), ((b * heads + h) * cap + at + s) * dim);
      }
}
