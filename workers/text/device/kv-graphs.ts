// The small ONNX graphs that edit a KV cache kept on the GPU (ONNX Runtime's device buffers cannot be read or written
// from JavaScript): `select` takes rows of a batch and widens every tensor to a capacity, `concat` stacks two batches,
// `read` slices one row's columns out (its outputs go to the host, for the prefix cache).
import { GraphBuilder, T } from "../../../src/modelgen/onnx-builder.ts";

/** Element type of the cache tensors: float16 graphs (kiln's fp16 / q4f16) or float32 ones. */
export type KvElement = "float16" | "float32";

/** ONNX's element type numbers (TensorProto.DataType) of the two cache types. */
const FLOAT16 = 10;

function elemType(kind: KvElement): number {
  return kind === "float16" ? FLOAT16 : T.FLOAT;
}

/**
 * `select`: inputs `rows` (int64 [n], the rows kept, in their new order), `pads` (int64 [8], Pad's begin/end amounts:
 * only the end of axis 2 is ever non-zero, the new spare columns) and `kv{i}` [batch, heads, cap, dim] for each of
 * `count` tensors; outputs `out{i}` = Pad(Gather(kv{i}, rows, axis 0), pads) with zeros.
 */
export function selectGraph(count: number, kind: KvElement): Uint8Array {
  const g = new GraphBuilder();
  const rows = g.input("rows", T.INT64, ["n"]);
  const pads = g.input("pads", T.INT64, [8]);
  for (let i = 0; i < count; i++) {
    const kv = g.input(`kv${i}`, elemType(kind), ["batch", "heads", "cap", "dim"]);
    const taken = g.node("Gather", [kv, rows], { axis: { kind: "int", v: 0 } });
    g.node("Pad", [taken, pads], {}, { output: `out${i}` });
    g.output(`out${i}`, elemType(kind), ["n", "heads", "new_cap", "dim"]);
  }
  return g.encode("kv_select");
}

/** `concat`: inputs `a{i}` and `b{i}` of one capacity; outputs `out{i}` = Concat(a{i}, b{i}, axis 0). */
export function concatGraph(count: number, kind: KvElement): Uint8Array {
  const g = new GraphBuilder();
  for (let i = 0; i < count; i++) {
    const a = g.input(`a${i}`, elemType(kind), ["a_batch", "heads", "cap", "dim"]);
    const b = g.input(`b${i}`, elemType(kind), ["b_batch", "heads", "cap", "dim"]);
    g.node("Concat", [a, b], { axis: { kind: "int", v: 0 } }, { output: `out${i}` });
    g.output(`out${i}`, elemType(kind), ["batch", "heads", "cap", "dim"]);
  }
  return g.encode("kv_concat");
}

/**
 * `read`: inputs `starts` and `ends` (int64 [4]: Slice's bounds over [batch, heads, cap, dim]) and `kv{i}`; outputs
 * `out{i}` = Slice(kv{i}, starts, ends), one row's columns of every tensor.
 */
export function readGraph(count: number, kind: KvElement): Uint8Array {
  const g = new GraphBuilder();
  const starts = g.input("starts", T.INT64, [4]);
  const ends = g.input("ends", T.INT64, [4]);
  for (let i = 0; i < count; i++) {
    const kv = g.input(`kv${i}`, elemType(kind), ["batch", "heads", "cap", "dim"]);
    g.node("Slice", [kv, starts, ends], {}, { output: `out${i}` });
    g.output(`out${i}`, elemType(kind), [1, "heads", "n", "dim"]);
  }
  return g.encode("kv_read");
}
