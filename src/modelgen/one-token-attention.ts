// Grouped-query attention for a pass of one new token a row, as plain GEMMs over the cache and the new key apart, with
// no concatenated cache: the decoder's one-token graph (decoder-graph.ts `step`). ONNX's Attention op copies the whole
// past into its present outputs every pass and scores each query head on its own; here a KV head's query heads are one
// GEMM against the cache as it is fed, so a decode step's attention stops carrying a copy of the context.
import { float, type GraphBuilder, int } from "./onnx-builder.ts";

export interface AttentionDims {
  heads: number;
  kvHeads: number;
  headDim: number;
}

/** What every layer's attention shares, built once: the reshape targets and where the new key's score starts. */
export interface OneTokenShapes {
  /** [B, KV, G, D]: one token's query heads grouped by their KV head (G = heads / kvHeads). */
  queryGroups: string;
  /** [B, KV, 1, D]: the new key or value by head. */
  newHeads: string;
  /** [B, 1, heads·D]: the output as the layer takes it. */
  outFlat: string;
  /** The cache's column count P (int64 [1]). */
  pastLen: string;
  /** The additive mask [B, 1, 1, T]: with one query it already broadcasts over [B, KV, G, T]. */
  mask: string;
}

/** `batch`, `pastLen`: int64 [1] sizes; `mask`: the additive mask [B, 1, S, T] of a pass whose S is 1. */
export function oneTokenShapes(g: GraphBuilder, dims: AttentionDims, sizes: { batch: string; pastLen: string; mask: string }): OneTokenShapes {
  const { heads: NH, kvHeads: KV, headDim: D } = dims;
  const shape = (...parts: string[]) => g.node("Concat", parts, { axis: int(0) });
  return {
    queryGroups: shape(sizes.batch, g.int64([KV, NH / KV, D])),
    newHeads: shape(sizes.batch, g.int64([KV, 1, D])),
    outFlat: shape(sizes.batch, g.int64([1, NH * D])),
    pastLen: sizes.pastLen,
    mask: sizes.mask,
  };
}

/**
 * softmax(q·[past; new]ᵀ / √D + mask)·[past; new] for one token a row: [B, 1, heads·D] queries and [B, 1, KV·D] new
 * keys and values over a [B, KV, P, D] cache, returned as [B, 1, heads·D]. With one token, [B, 1, heads·D] is
 * [B, KV, G, D] in memory, so no transpose is needed anywhere. A pass of more tokens fails the first reshape.
 */
export function oneTokenAttention(
  g: GraphBuilder,
  dims: AttentionDims,
  s: OneTokenShapes,
  io: { query: string; key: string; value: string; pastKey: string; pastValue: string; output?: string },
): string {
  const alpha = float(1 / Math.sqrt(dims.headDim));
  const q = g.node("Reshape", [io.query, s.queryGroups]);
  const scores = (keys: string) => g.node("FusedMatMul", [q, keys], { transB: int(1), alpha }, { domain: "com.microsoft" });
  // [B, KV, G, P + 1]: each query head's scores over the cache's columns, then the new key's.
  const joined = g.node("Concat", [scores(io.pastKey), scores(g.node("Reshape", [io.key, s.newHeads]))], { axis: int(-1) });
  const probs = g.node("Softmax", [g.node("Add", [joined, s.mask])], { axis: int(-1) });
  const overPast = g.node("Slice", [probs, g.int64([0]), s.pastLen, g.int64([3])]);
  const overNew = g.node("Slice", [probs, s.pastLen, g.int64([Number.MAX_SAFE_INTEGER]), g.int64([3])]);
  const out = g.node("Add", [g.node("MatMul", [overPast, io.pastValue]), g.node("MatMul", [overNew, g.node("Reshape", [io.value, s.newHeads])])]);
  return g.node("Reshape", [out, s.outFlat], {}, { output: io.output });
}
