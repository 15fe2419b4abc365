// The Llama/Qwen2 decoder for ONNX Runtime's WebGPU EP (fp16, q4f16): GroupQueryAttention over right-padded rows, no attention mask.
import { headNorm, Q4_ACCURACY_LEVEL, Q4_BLOCK, layerTail, rmsNormOps } from "./graph-ops.ts";
import { GraphBuilder, int, T } from "./onnx-builder.ts";
import { rotaryInputs } from "./rotary.ts";
import type { Dtype, ModelSpec } from "./spec.ts";
import { weightNames, type Linear } from "./weights.ts";

export type GpuDtype = "fp16" | "q4f16";
export const GPU_DTYPES: readonly GpuDtype[] = ["fp16", "q4f16"];
export const isGpuDtype = (d: Dtype): d is GpuDtype => d === "fp16" || d === "q4f16";
/**
 * The formats this graph is written in: the GPU ones, and q4 with float32 activations, the layout of a transformers.js
 * CPU export (onnx-community's `model_q4.onnx`: MatMulNBits and GroupQueryAttention), which kiln builds only as an
 * operator's folder for tests.
 */
export type GqaDtype = GpuDtype | "q4";

/**
 * The fp16 head's tensor, [hidden, vocab] for a plain MatMul. A tied model's embedding table is [vocab, hidden] (the
 * Gather's layout), so the head is stored a second time transposed, under the name an untied model uses anyway.
 */
export const FP16_HEAD = "lm_head.weight";

const INT64_MAX = 9223372036854775807n;

/**
 * Inputs: input_ids, position_ids (int64 [B, S]), seqlens_k (int32 [B]: each row's total length − 1),
 * total_sequence_length (int32 scalar: the longest row's), past_key_values.{l}.key/.value (fp16 [B, KV, P, D]; float32
 * in q4). Outputs: logits (float32 [B, 1, vocab], the pass's last position only), present.{l}.key/.value (as the past).
 * Every op that does arithmetic on activations has a WebGPU kernel in onnxruntime 1.30 (MatMul or MatMulNBits,
 * GroupQueryAttention, RotaryEmbedding, the two RMS norms, Gather, Split, Add, Mul, Sigmoid, Slice, Cast), so a session
 * places none of it on the CPU; opset-23 Attention, FusedMatMul and DynamicQuantizeMatMul (the CPU graph's) have none.
 * Only the rotary angles (float64, from the host's position_ids) are computed on the CPU: B·S·D/2 values a pass.
 */
/**
 * Where the attention's lengths come from: kiln's own inputs (seqlens_k, total_sequence_length: nothing that grows with
 * the context crosses to the device), or an attention_mask [B, total] they are derived from inside the graph, as
 * transformers.js's GroupQueryAttention exports take it (an operator's own q4f16 folder looks like that).
 */
export type GpuLengths = "inputs" | "attention_mask";

export function gpuDecoderGraph(spec: ModelSpec, dtype: GqaDtype, lengths: GpuLengths = "inputs"): GraphBuilder {
  const g = new GraphBuilder();
  const { heads: NH, kvHeads: KV, headDim: D, vocab: V, layers: L } = spec;
  const names = weightNames(spec);
  // The activations' and the cache's element type.
  const F = dtype === "q4" ? T.FLOAT : T.FLOAT16;

  const ids = g.input("input_ids", T.INT64, ["batch_size", "sequence_length"]);
  const positions = g.input("position_ids", T.INT64, ["batch_size", "sequence_length"]);
  let seqlensK: string, totalLen: string;
  if (lengths === "inputs") {
    seqlensK = g.input("seqlens_k", T.INT32, ["batch_size"]);
    totalLen = g.input("total_sequence_length", T.INT32, []);
  } else {
    const mask = g.input("attention_mask", T.INT64, ["batch_size", "total_sequence_length"]);
    const toInt32 = (x: string) => g.node("Cast", [x], { to: int(T.INT32) });
    seqlensK = toInt32(g.node("Sub", [g.node("ReduceSum", [mask, g.int64([1])], { keepdims: int(0) }), g.int64([1], [])]));
    totalLen = toInt32(g.node("Squeeze", [g.node("Slice", [g.node("Shape", [mask]), g.int64([1]), g.int64([2])]), g.int64([0])]));
  }
  const past: { key: string; value: string }[] = [];
  for (let l = 0; l < L; l++) {
    past.push({
      key: g.input(`past_key_values.${l}.key`, F, ["batch_size", KV, "past_sequence_length", D]),
      value: g.input(`past_key_values.${l}.value`, F, ["batch_size", KV, "past_sequence_length", D]),
    });
  }

  const linear = (x: string, w: Linear, output?: string): string =>
    dtype === "fp16"
      ? g.node("MatMul", [x, w.name], {}, { output })
      : g.node(
          "MatMulNBits",
          [x, `${w.name}_Q4`, `${w.name}_scales`],
          { K: int(w.in), N: int(w.out), bits: int(4), block_size: int(Q4_BLOCK), accuracy_level: int(Q4_ACCURACY_LEVEL) },
          { domain: "com.microsoft", output },
        );
  const { rmsNorm, addNorm } = rmsNormOps(g, spec.rmsEps);

  // cos/sin rows for this pass's positions (never negative in this format), computed in the graph.
  const rope = rotaryInputs(g, positions, spec, F);
  const rotary = (x: string, n: number) =>
    g.node("RotaryEmbedding", [x, rope.ids, rope.cos, rope.sin], { interleaved: int(0), num_heads: int(n) }, { domain: "com.microsoft" });

  const embedded = g.node("Gather", [names.embed, ids], { axis: int(0) });
  let residual = embedded;
  let x = rmsNorm(embedded, names.layers[0]!.inputNorm);
  for (let l = 0; l < L; l++) {
    const w = names.layers[l]!;
    const qkvLin = linear(x, w.qkv);
    const qkv = w.qkvBias ? g.node("Add", [qkvLin, w.qkvBias.name]) : qkvLin;
    const [q, k, v] = g.nodeN("Split", [qkv, g.int64([NH * D, KV * D, KV * D])], { axis: int(-1) }, { count: 3 });
    // GroupQueryAttention reads each row's cache as columns [0, seqlens_k + 1 − S) of its past buffer and writes the S
    // new keys right after them, so right-padded rows of different lengths share one pass. Its default scale is 1/√D.
    const [attn] = g.nodeN(
      "GroupQueryAttention",
      [rotary(w.qNorm ? headNorm(g, rmsNorm, q!, w.qNorm, NH, D) : q!, NH), rotary(w.kNorm ? headNorm(g, rmsNorm, k!, w.kNorm, KV, D) : k!, KV), v!, past[l]!.key, past[l]!.value, seqlensK, totalLen],
      { num_heads: int(NH), kv_num_heads: int(KV) },
      { domain: "com.microsoft", outputs: [`/attention_${l}`, `present.${l}.key`, `present.${l}.value`] },
    );
    ({ residual, x } = layerTail(g, { linear, addNorm }, spec, names, l, residual, attn!));
  }

  // Only the last position reaches the head: a decode step needs no more, and a prefill's other rows would cost vocab·S.
  const lastPos = g.node("Slice", [x, g.int64([-1]), g.int64([INT64_MAX]), g.int64([1])]);
  const head = dtype === "fp16" ? g.node("MatMul", [lastPos, FP16_HEAD]) : linear(lastPos, names.head);
  if (F === T.FLOAT) g.node("Identity", [head], {}, { output: "logits" });
  else g.node("Cast", [head], { to: int(T.FLOAT) }, { output: "logits" });

  g.output("logits", T.FLOAT, ["batch_size", 1, V]);
  for (let l = 0; l < L; l++) {
    for (const kv of ["key", "value"]) g.output(`present.${l}.${kv}`, F, ["batch_size", KV, "present_sequence_length", D]);
  }
  return g;
}
