// How closely the GPU formats' next-token logits must track the fp32 CPU graph: bounds derived from the formats' own
// precision, never from what one machine happened to give (tests and the bench both use these).

/**
 * fp16 vs fp32. fp16 has an 11-bit significand: rounding to it leaves a relative error uniform within ±u, u = 2^-11,
 * a noise-to-signal variance (NSR) of u²/3 ≈ 8e-8 per rounded tensor. A layer rounds about 15 tensors (weights and
 * stored activations); a kernel that also accumulates in fp16 adds up to K·u²/3 for each of its 4 matmuls (K inputs,
 * the wider of hidden and intermediate). Over L layers that is L·(15 + 4K)·u²/3; allowing the network to amplify it
 * tenfold, the correlation 1/√(1 + NSR) must hold. The tiny preset (L 4, K 384): 0.9975; qwen2-0.5b (L 24, K 4864): 0.85.
 */
export function fp16Correlation(spec: Shape): number {
  return 1 / Math.sqrt(1 + fp16Nsr(spec));
}

type Shape = { layers: number; hidden: number; intermediate: number };

function fp16Nsr(spec: Shape): number {
  const perRounding = 2 ** -22 / 3;
  return 10 * spec.layers * (15 + 4 * Math.max(spec.hidden, spec.intermediate)) * perRounding;
}

/**
 * q4f16 on the GPU vs the CPU's q4 graph: the same 4-bit levels, so only the fp16 chain above differs, plus each side's
 * own int8 activation quantization (MatMulNBits at accuracy level 4): (4/127)²/12 ≈ 8e-5 per matmul node, 4 a layer
 * and the head, twice. The tiny preset: 0.996; qwen2-0.5b: 0.85. (q4f16 vs fp32 carries q4's own error, which grows
 * with the depth of a random network: on the bench's qwen2-0.5b the CPU's q4 itself tracks fp32 at 0.85 only.)
 */
export function q4f16VsQ4Correlation(spec: Shape): number {
  const activations = 2 * (4 * spec.layers + 1) * ((4 / 127) ** 2 / 12);
  return 1 / Math.sqrt(1 + fp16Nsr(spec) + activations);
}

/** fp16Correlation's derivation for one model, in a line (for reports). */
export function fp16Derivation(spec: Shape): string {
  const k = Math.max(spec.hidden, spec.intermediate);
  return `fp16 rounding u = 2^-11, NSR u²/3 per rounded tensor over ${spec.layers} layers × (15 tensors + 4 fp16-accumulated matmuls of K ≤ ${k}), ×10 slack, r ≥ 1/√(1 + NSR)`;
}

/** q4f16 vs fp32 carries q4's own error: the bound the CPU q4 format is held to. */
export const Q4_CORRELATION = 0.9;
/** q4f16VsQ4Correlation's derivation in a line (for reports). */
export function q4f16Derivation(spec: Shape): string {
  return `the CPU's q4 levels, so ${fp16Derivation(spec)}, plus both sides' int8 activations, (4/127)²/12 per matmul`;
}
