// One step of diffusers' Euler and Euler-ancestral samplers on a row of latents, plus guidance and the inpainting
// blend. Arithmetic in float64, results stored as float32 latents.
import type { Prediction } from "./schedule.ts";

/** Classifier-free guidance: ε_u + g·(ε_c − ε_u). */
export function guide(uncond: ArrayLike<number>, cond: ArrayLike<number>, scale: number): Float64Array {
  const out = new Float64Array(cond.length);
  for (let i = 0; i < out.length; i++) out[i] = uncond[i]! + scale * (cond[i]! - uncond[i]!);
  return out;
}

/** What the UNet sees at sigma: x/√(σ² + 1). */
export function modelInput(x: Float32Array, sigma: number): Float32Array {
  const k = 1 / Math.sqrt(sigma * sigma + 1);
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i]! * k;
  return out;
}

/** The denoised estimate x0 from one model output value, by the scheduler's prediction type. */
export function predictOriginal(x: number, out: number, sigma: number, prediction: Prediction): number {
  if (prediction === "epsilon") return x - sigma * out;
  if (prediction === "v_prediction") return out * (-sigma / Math.sqrt(sigma * sigma + 1)) + x / (sigma * sigma + 1);
  return out;
}

/** Ancestral split of the move from σ to σ': the deterministic part lands at σ_down, fresh noise adds σ_up. */
export function ancestralSigmas(sigma: number, next: number): { up: number; down: number } {
  const up = Math.sqrt((next * next * (sigma * sigma - next * next)) / (sigma * sigma));
  return { up, down: Math.sqrt(next * next - up * up) };
}

/**
 * x moved from `sigma` to `next` along (x − x0)/σ. With `noise` (ancestral) it moves to σ_down and then adds
 * noise·σ_up; without it, it moves to `next` (plain Euler).
 */
export function eulerUpdate(x: Float32Array, out: ArrayLike<number>, sigma: number, next: number, prediction: Prediction, noise?: ArrayLike<number>): Float32Array {
  const { up, down } = noise ? ancestralSigmas(sigma, next) : { up: 0, down: next };
  const dt = down - sigma;
  const result = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const xi = x[i]!;
    const derivative = (xi - predictOriginal(xi, out[i]!, sigma, prediction)) / sigma;
    result[i] = noise ? xi + derivative * dt + noise[i]! * up : xi + derivative * dt;
  }
  return result;
}

/**
 * Inpainting with a plain 4-channel UNet: where the mask is 0 the latents are put back to the original noised to
 * `sigma` (init + noise·σ); where it is 1 they keep the step's result. `mask` has one value per latent cell, shared by
 * every channel of `plane` = h·w cells. In place.
 */
export function blendMask(x: Float32Array, init: Float32Array, noise: ArrayLike<number>, sigma: number, mask: Float32Array, plane: number): void {
  for (let i = 0; i < x.length; i++) {
    const m = mask[i % plane]!;
    const proper = init[i]! + noise[i]! * sigma;
    x[i] = (1 - m) * proper + m * x[i]!;
  }
}
