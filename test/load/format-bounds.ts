// The correlation bounds a format's next-token logits must keep against fp32, shared by the builder's tests and the bench.

/**
 * fp16 against fp32. fp16 has an 11-bit significand: rounding to it leaves a relative error uniform within ±u,
 * u = 2^-11 ≈ 4.9e-4, a noise-to-signal variance (NSR) of u²/3 ≈ 8e-8 per rounded tensor. A layer rounds about 15
 * tensors; a kernel that also accumulates in fp16 adds up to K·u²/3 per matmul (K ≤ 384 inputs at the tiny preset).
 * Over 4 layers that is 4·(15 + 4·384)·8e-8 ≈ 5e-4; ten times that for the random network's amplification gives
 * NSR 5e-3 and a correlation 1/√(1 + NSR) ≥ 0.9975.
 */
export const FP16_CORR = 0.9975;
/** FP16_CORR's derivation in one line, for reports. */
export const FP16_DERIVATION = "fp16 rounding u = 2^-11, NSR u²/3 per rounded tensor over 4 layers × (15 tensors + 4 fp16-accumulated matmuls of K ≤ 384), ×10 slack: NSR 5e-3, r ≥ 1/√(1 + NSR)";

/** q4 (15 levels a block, ~18× int8's step²) against fp32: only a loose bound is promised; q4f16 carries the same error. */
export const Q4_CORR = 0.9;
/** Q4_CORR's reason in one line, for reports. */
export const Q4_DERIVATION = "q4's bound: 15 levels a block, ~18× int8's step², only a loose correlation is promised";
