// The Llama/Qwen2 decoder as an ONNX graph of standard and com.microsoft ops, exact under left padding (no GroupQueryAttention).
import { headNorm, linearOp, layerTail, rmsNormOps } from "./graph-ops.ts";
import { GraphBuilder, int, T } from "./onnx-builder.ts";
import { rotaryInputs } from "./rotary.ts";
import { oneTokenAttention, oneTokenShapes } from "./one-token-attention.ts";
import type { Dtype, ModelSpec } from "./spec.ts";
import { weightNames } from "./weights.ts";

/** Finite rather than -inf so that rows with every key masked (padding queries) stay NaN-free. */
const MASKED = -1e9;
const INT64_MAX = 9223372036854775807n;

export interface DecoderOptions {
  /** Take `inputs_embeds` [B, S, hidden] in place of `input_ids` (transformers.js's decoder_model_merged of media models). */
  inputsEmbeds?: boolean;
  /**
   * kiln's one-token graph: passes of one new token a row only, attention as GEMMs over the cache and the new key apart
   * (one-token-attention.ts), and no `present.*` outputs, only `step_key_values.*`. transformers.js cannot drive it (no
   * presents); kiln's worker loads it beside the main graph for its one-token passes.
   */
  step?: boolean;
}

/**
 * Whether the graph's embedding table is stored as int8 rows with a scale each (the quantized CPU formats' text graph):
 * a quarter of float32's bytes for the largest tensor of a small model, within half a step (max|row|/254) per value.
 */
export function int8EmbeddingRows(dtype: Dtype, opts: DecoderOptions = {}): boolean {
  return !opts.inputsEmbeds && (dtype === "int8" || dtype === "q4");
}

/** The int8 embedding table (rows for Gather; a tied head's own int8 copy is `<embed>_int8`, transposed) and its per-row scales. */
export const embedRowsName = (embed: string) => `${embed}_rows_int8`;
export const embedScaleName = (embed: string) => `${embed}_row_scale`;

/** Builds the graph's nodes and I/O; weight initializers are added by the weight writer afterwards. */
export function decoderGraph(spec: ModelSpec, dtype: Dtype, opts: DecoderOptions = {}): GraphBuilder {
  const g = new GraphBuilder();
  const { heads: NH, kvHeads: KV, headDim: D, vocab: V, layers: L } = spec;
  const names = weightNames(spec);

  const tokensIn = opts.inputsEmbeds
    ? g.input("inputs_embeds", T.FLOAT, ["batch_size", "sequence_length", spec.hidden])
    : g.input("input_ids", T.INT64, ["batch_size", "sequence_length"]);
  const attnMask = g.input("attention_mask", T.INT64, ["batch_size", "total_sequence_length"]);
  const positionIds = g.input("position_ids", T.INT64, ["batch_size", "sequence_length"]);
  const past: { key: string; value: string }[] = [];
  for (let i = 0; i < L; i++) {
    past.push({
      key: g.input(`past_key_values.${i}.key`, T.FLOAT, ["batch_size", KV, "past_sequence_length", D]),
      value: g.input(`past_key_values.${i}.value`, T.FLOAT, ["batch_size", KV, "past_sequence_length", D]),
    });
  }
  const keep = g.input("num_logits_to_keep", T.INT64, []);

  const linear = linearOp(g, dtype);
  const { rmsNorm, addNorm } = rmsNormOps(g, spec.rmsEps);

  // Sizes: S (new tokens), P (cached tokens), T = P + S (the attention mask's length).
  const one = g.int64([1]);
  const sliceDim = (shape: string, i: number) => g.node("Slice", [shape, g.int64([i]), g.int64([i + 1])]);
  const idsShape = g.node("Shape", [tokensIn]);
  const seqLen = sliceDim(idsShape, 1);
  const pastLen = sliceDim(g.node("Shape", [past[0]!.key]), 2);
  const totalLen = sliceDim(g.node("Shape", [attnMask]), 1);
  const scalar = (x: string) => g.node("Squeeze", [x, g.int64([0])]);

  // Additive mask [B, 1, S, T]: key j is visible to query i (absolute P + i) iff j <= P + i and attention_mask[b, j] = 1.
  const keyPos = g.node("Range", [g.int64([0], []), scalar(totalLen), g.int64([1], [])]);
  const queryPos = g.node("Range", [scalar(pastLen), scalar(totalLen), g.int64([1], [])]);
  const causal = g.node("LessOrEqual", [keyPos, g.node("Unsqueeze", [queryPos, one])]);
  const padOk = g.node("Unsqueeze", [g.node("Cast", [attnMask], { to: int(T.BOOL) }), g.int64([1, 2])]);
  const allowed = g.node("And", [causal, padOk]);
  const mask = g.node("Where", [allowed, g.float32([0], []), g.float32([MASKED], [])]);

  // Rotary embedding (rotate-half layout) from position_ids, its cos/sin rows computed for this pass's positions only.
  // Padding positions may arrive as −1 (cumsum(mask) − 1); they are masked anyway, but their angles need not exist.
  const rope = rotaryInputs(g, g.node("Max", [positionIds, g.int64([0], [])]), spec, T.FLOAT);
  const rotary = (x: string, n: number, output?: string) =>
    g.node("RotaryEmbedding", [x, rope.ids, rope.cos, rope.sin], { interleaved: int(0), num_heads: int(n) }, { domain: "com.microsoft", output });
  const embedded = opts.inputsEmbeds
    ? tokensIn
    : int8EmbeddingRows(dtype, opts)
      ? g.node("Mul", [
          g.node("Cast", [g.node("Gather", [embedRowsName(names.embed), tokensIn], { axis: int(0) })], { to: int(T.FLOAT) }),
          g.node("Unsqueeze", [g.node("Gather", [embedScaleName(names.embed), tokensIn], { axis: int(0) }), g.int64([-1])]),
        ])
      : g.node("Gather", [names.embed, tokensIn], { axis: int(0) });
  const oneToken = opts.step ? oneTokenShapes(g, { heads: NH, kvHeads: KV, headDim: D }, { batch: sliceDim(idsShape, 0), pastLen, mask }) : null;
  let residual = embedded;
  let x = rmsNorm(embedded, names.layers[0]!.inputNorm);
  for (let l = 0; l < L; l++) {
    const w = names.layers[l]!;
    // The new keys (rotated) and values are outputs too, `step_key_values.*` (not named present*: transformers.js would
    // feed those back as past inputs). A caller that keeps its cache in place fetches only those and appends them. The
    // concatenated `present.*` stay graph outputs for transformers.js; unfetched, they still cost 3–6% of a step here
    // (A/B against a graph without them).
    const stepKey = `step_key_values.${l}.key`, stepValue = `step_key_values.${l}.value`;
    const [qp, kp] = g.nodeN("Split", [linear(x, w.qkv, w.qkvBias?.name), g.int64([NH * D, KV * D, KV * D])], { axis: int(-1) }, {
      outputs: [`/split_qkv_${l}/q`, `/split_qkv_${l}/k`, stepValue],
    });
    // Qwen3: each head's q and k RMS-normed before rotation.
    const qn = w.qNorm ? headNorm(g, rmsNorm, qp!, w.qNorm, NH, D) : qp!;
    const kn = w.kNorm ? headNorm(g, rmsNorm, kp!, w.kNorm, KV, D) : kp!;
    rotary(kn, KV, stepKey);
    // Grouped-query attention over [B, S, heads·D] inputs; the op concatenates the cache inside ([B, KV, T, D] outputs).
    // Either form's additive mask keeps it exact under left padding (and over a cache's unused, masked columns).
    const io = { query: rotary(qn, NH), key: stepKey, value: stepValue, pastKey: past[l]!.key, pastValue: past[l]!.value };
    const attn = oneToken
      ? oneTokenAttention(g, { heads: NH, kvHeads: KV, headDim: D }, oneToken, io)
      : g.nodeN("Attention", [io.query, io.key, io.value, mask, io.pastKey, io.pastValue], { q_num_heads: int(NH), kv_num_heads: int(KV) }, {
          outputs: [`/attention_${l}`, `present.${l}.key`, `present.${l}.value`],
        })[0]!;
    ({ residual, x } = layerTail(g, { linear, addNorm }, spec, names, l, residual, attn));
  }

  // num_logits_to_keep: 0 → every position, k > 0 → the last k (clamped to S).
  const s = scalar(seqLen);
  const zero = g.int64([0], []);
  const fromEnd = g.node("Max", [g.node("Sub", [s, keep]), zero]);
  const start = g.node("Where", [g.node("Greater", [keep, zero]), fromEnd, zero]);
  const kept = g.node("Slice", [x, g.node("Unsqueeze", [start, g.int64([0])]), g.int64([INT64_MAX]), one]);
  const logitsName = "logits";
  if (dtype === "fp32") {
    g.node("FusedMatMul", [kept, names.head.name], { transB: int(1) }, { domain: "com.microsoft", output: logitsName });
  } else {
    linear(kept, names.head, undefined, logitsName);
  }

  g.output("logits", T.FLOAT, ["batch_size", "logits_length", V]);
  for (const kind of opts.step ? (["step_key_values"] as const) : (["present", "step_key_values"] as const)) {
    const dims = kind === "present" ? ["batch_size", KV, "total_sequence_length", D] : ["batch_size", "sequence_length", KV * D];
    for (let l = 0; l < L; l++) for (const kv of ["key", "value"]) g.output(`${kind}.${l}.${kv}`, T.FLOAT, dims);
  }
  return g;
}

/** `input_ids` → `inputs_embeds`: the embedding table on its own (kept fp32 in every dtype, as the decoder's Gather is). */
export function embedTokensGraph(spec: ModelSpec): GraphBuilder {
  const g = new GraphBuilder();
  const ids = g.input("input_ids", T.INT64, ["batch_size", "sequence_length"]);
  g.node("Gather", [weightNames(spec).embed, ids], { axis: int(0) }, { output: "inputs_embeds" });
  g.output("inputs_embeds", T.FLOAT, ["batch_size", "sequence_length", spec.hidden]);
  return g;
}
