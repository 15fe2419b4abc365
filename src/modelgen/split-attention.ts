// Grouped-query attention as plain GEMMs over the cache and the pass's new keys separately, with no concatenated cache:
// the decoder's one-token graph (decoder-graph.ts `step`). ONNX's Attention op copies the whole past into its present
// outputs every pass and scores each query head on its own; here a KV head's query heads are one GEMM against the cache
// as it is fed, so a decode step's attention stops growing with a copy of the context.
import { float, type GraphBuilder, int, ints } from "./onnx-builder.ts";

/** What every layer's attention shares: the pass's sizes as shape pieces and the additive mask, built once. */
export interface SplitAttentionShapes {
  /** [B, S, KV, G, D]: the queries' heads grouped by their KV head. */
  queryGroups: string;
  /** [B, KV, G·S, D]: a KV head's query rows as one matrix. */
  queryRows: string;
  /** [B, S, KV, D]: the new keys or values by head. */
  newHeads: string;
  /** [B, KV, G, S, T]: the scores with the grouped heads apart, to meet the mask. */
  scoreGroups: string;
  /** [B, KV, G·S, T]: the probabilities as a KV head's rows again. */
  probRows: string;
  /** [B, KV, G, S, D] → after the transpose, [B, S, NH·D]. */
  outGroups: string;
  outFlat: string;
  /** The cache's column count P (int64 [1]): where the new keys' scores start. */
  pastLen: string;
  /** The additive mask as [B, 1, 1, S, T]. */
  mask5: string;
}

export interface AttentionDims {
  heads: number;
  kvHeads: number;
  headDim: number;
}

/** `batch`, `seqLen`, `pastLen`, `totalLen`: int64 [1] sizes; `mask`: the additive mask [B, 1, S, T]. */
export function splitAttentionShapes(
  g: GraphBuilder,
  dims: AttentionDims,
  sizes: { batch: string; seqLen: string; pastLen: string; totalLen: string; mask: string },
): SplitAttentionShapes {
  const { heads: NH, kvHeads: KV, headDim: D } = dims;
  const G = NH / KV;
  const { batch: B, seqLen: S, totalLen: T } = sizes;
  const shape = (...parts: string[]) => g.node("Concat", parts, { axis: int(0) });
  return {
    queryGroups: shape(B, S, g.int64([KV, G, D])),
    queryRows: shape(B, g.int64([KV, -1, D])),
    newHeads: shape(B, S, g.int64([KV, D])),
    scoreGroups: shape(B, g.int64([KV, G]), S, T),
    probRows: shape(B, g.int64([KV, -1]), T),
    outGroups: shape(B, g.int64([KV, G]), S, g.int64([D])),
    outFlat: shape(B, S, g.int64([NH * D])),
    pastLen: sizes.pastLen,
    mask5: g.node("Unsqueeze", [sizes.mask, g.int64([1])]),
  };
}

/**
 * softmax(q·[past; new]ᵀ / √D + mask)·[past; new] for [B, S, NH·D] queries and [B, S, KV·D] new keys and values over
 * a [B, KV, P, D] cache, returned as [B, S, NH·D]: the Attention op's result, without its present outputs.
 */
export function splitAttention(
  g: GraphBuilder,
  dims: AttentionDims,
  s: SplitAttentionShapes,
  io: { query: string; key: string; value: string; pastKey: string; pastValue: string; output?: string },
): string {
  const alpha = float(1 / Math.sqrt(dims.headDim));
  const heads = (x: string) => g.node("Transpose", [g.node("Reshape", [x, s.newHeads])], { perm: ints([0, 2, 1, 3]) });
  const q = g.node("Reshape", [g.node("Transpose", [g.node("Reshape", [io.query, s.queryGroups])], { perm: ints([0, 2, 3, 1, 4]) }), s.queryRows]);
  const scores = (keys: string) => g.node("FusedMatMul", [q, keys], { transB: int(1), alpha }, { domain: "com.microsoft" });
  // [B, KV, G·S, P + S]: one row of scores per query, over the cache's columns and then the new ones.
  const joined = g.node("Concat", [scores(io.pastKey), scores(heads(io.key))], { axis: int(-1) });
  const probs5 = g.node("Softmax", [g.node("Add", [g.node("Reshape", [joined, s.scoreGroups]), s.mask5])], { axis: int(-1) });
  const probs = g.node("Reshape", [probs5, s.probRows]);
  const end = g.int64([Number.MAX_SAFE_INTEGER]);
  const overPast = g.node("Slice", [probs, g.int64([0]), s.pastLen, g.int64([3])]);
  const overNew = g.node("Slice", [probs, s.pastLen, end, g.int64([3])]);
  const out = g.node("Add", [g.node("MatMul", [overPast, io.pastValue]), g.node("MatMul", [overNew, heads(io.value)])]);
  const grouped = g.node("Transpose", [g.node("Reshape", [out, s.outGroups])], { perm: ints([0, 3, 1, 2, 4]) });
  return g.node("Reshape", [grouped, s.outFlat], {}, { output: io.output });
}
