// Graph pieces the decoder and the encoders share: linear layers in each dtype, GELU, LayerNorm and a pre-norm encoder layer.
import { float, GraphBuilder, int } from "./onnx-builder.ts";
import type { Dtype } from "./spec.ts";
import type { Linear, WeightNames } from "./weights.ts";

/** Q4 linear layers use MatMulNBits with this block size and accuracy level (level 4 quantizes activations: fast). */
export const Q4_BLOCK = 32;
export const Q4_ACCURACY_LEVEL = 4;

export type LinearOp = (x: string, w: Linear, bias?: string, output?: string) => string;

/** y = x·W (+ bias) as the dtype stores W; biases go into the quantized matmul itself (its optional last input). */
export function linearOp(g: GraphBuilder, dtype: Dtype): LinearOp {
  return (x, w, bias, output) => {
    if (dtype === "fp32") {
      const y = g.node("MatMul", [x, w.name], {}, { output: bias ? undefined : output });
      return bias ? g.node("Add", [y, bias], {}, { output }) : y;
    }
    if (dtype === "q4") {
      return g.node(
        "MatMulNBits",
        [x, `${w.name}_Q4`, `${w.name}_scales`, ...(bias ? ["", "", bias] : [])],
        { K: int(w.in), N: int(w.out), bits: int(4), block_size: int(Q4_BLOCK), accuracy_level: int(Q4_ACCURACY_LEVEL) },
        { domain: "com.microsoft", output },
      );
    }
    return g.node("DynamicQuantizeMatMul", [x, `${w.name}_int8`, `${w.name}_scale`, ...(bias ? ["", bias] : [])], {}, { domain: "com.microsoft", output });
  };
}

/** A decoder's RMS norms: the plain one, and the residual add fused with the next norm. */
export function rmsNormOps(g: GraphBuilder, eps: number) {
  let skips = 0;
  return {
    // stash_type 1: the mean square is accumulated in fp32 whatever the input type.
    rmsNorm: (x: string, weight: string) => g.node("SimplifiedLayerNormalization", [x, weight], { axis: int(-1), epsilon: float(eps), stash_type: int(1) }),
    /** norm(residual + x) in one node, and the new residual unless `last`. */
    addNorm(residual: string, x: string, weight: string, last = false): { normed: string; residual: string } {
      const id = skips++;
      const outputs = [`/skip_norm_${id}`, "", "", ...(last ? [] : [`/residual_${id}`])];
      g.nodeN("SkipSimplifiedLayerNormalization", [residual, x, weight], { epsilon: float(eps) }, { domain: "com.microsoft", outputs });
      return { normed: outputs[0]!, residual: outputs[3] ?? "" };
    },
  };
}

/**
 * RMS norm of each head's slice of x [B, S, heads·D] with one weight of D (Qwen3's q_norm / k_norm): reshaped to
 * [B, S, heads, D] so the norm runs over the last axis, then back. `rmsNorm` is the decoder's own (same ε).
 */
export function headNorm(g: GraphBuilder, rmsNorm: (x: string, weight: string) => string, x: string, weight: string, heads: number, headDim: number): string {
  const perHead = g.node("Reshape", [x, g.int64([0, 0, heads, headDim])]);
  return g.node("Reshape", [rmsNorm(perHead, weight), g.int64([0, 0, heads * headDim])]);
}

/**
 * A decoder layer after its attention output: the output projection added to the residual and normed, the SwiGLU MLP,
 * then its sum normed by the next layer's input norm (the final norm after the last layer). Returns the next layer's
 * residual and normed input.
 */
export function layerTail(
  g: GraphBuilder,
  parts: { linear: (x: string, w: Linear) => string; addNorm: ReturnType<typeof rmsNormOps>["addNorm"] },
  spec: { intermediate: number; layers: number },
  names: WeightNames,
  l: number,
  residual: string,
  attn: string,
): { residual: string; x: string } {
  const w = names.layers[l]!;
  const post = parts.addNorm(residual, parts.linear(attn, w.o), w.postNorm);
  const [gate, up] = g.nodeN("Split", [parts.linear(post.normed, w.gateUp), g.int64([spec.intermediate, spec.intermediate])], { axis: int(-1) }, { count: 2 });
  const act = g.node("Mul", [g.node("Mul", [gate!, g.node("Sigmoid", [gate!])]), up!]);
  const last = l + 1 === spec.layers;
  const next = parts.addNorm(post.residual, parts.linear(act, w.down), last ? names.finalNorm : names.layers[l + 1]!.inputNorm, last);
  return { residual: next.residual, x: next.normed };
}

/** The exact (erf) GELU of CLIP, Whisper and LLaVA's projector: x · ½ · (1 + erf(x / √2)). */
export function gelu(g: GraphBuilder, x: string): string {
  const erf = g.node("Erf", [g.node("Div", [x, g.float32([Math.SQRT2], [])])]);
  return g.node("Mul", [g.node("Mul", [x, g.node("Add", [erf, g.float32([1], [])])]), g.float32([0.5], [])]);
}

export interface NormNames {
  weight: string;
  bias: string;
}

export function layerNorm(g: GraphBuilder, x: string, n: NormNames, eps: number): string {
  return g.node("LayerNormalization", [x, n.weight, n.bias], { axis: int(-1), epsilon: float(eps) });
}

/** A linear layer with a bias, both generated from the weight's name (fused q/k/v carry their parts). */
export type BiasedLinear = Linear & { bias: string };

export interface EncoderLayerNames {
  norm1: NormNames;
  qkv: BiasedLinear;
  out: BiasedLinear;
  norm2: NormNames;
  fc1: BiasedLinear;
  fc2: BiasedLinear;
}

/** One pre-norm transformer layer over [B, S, hidden]: full (unmasked) self-attention, then a GELU MLP, each residual. */
export function encoderLayer(g: GraphBuilder, linear: LinearOp, x: string, w: EncoderLayerNames, heads: number, eps: number): string {
  const hidden = w.out.out;
  const [q, k, v] = g.nodeN("Split", [linear(layerNorm(g, x, w.norm1, eps), w.qkv, w.qkv.bias), g.int64([hidden, hidden, hidden])], { axis: int(-1) }, { count: 3 });
  // Opset-23 Attention over [B, S, heads·D] inputs: no mask, no cache, scale 1/√D.
  const attn = g.node("Attention", [q!, k!, v!], { q_num_heads: int(heads), kv_num_heads: int(heads) });
  const h = g.node("Add", [x, linear(attn, w.out, w.out.bias)]);
  const mlp = linear(gelu(g, linear(layerNorm(g, h, w.norm2, eps), w.fc1, w.fc1.bias)), w.fc2, w.fc2.bias);
  return g.node("Add", [h, mlp]);
}
