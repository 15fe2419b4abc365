// Pooling and normalization of an encoder's token rows into one vector per input, as sentence-transformers computes
// them: mean over the real tokens, the first token (CLS), or the last real token; then, when the model normalizes,
// unit length. Pure functions over the flat [B, S, H] output of one run.
import type { PoolingMode } from "../../src/protocol/embed.ts";

/** Row `b`'s vector from `hidden` [B, S, H] (row-major), whose first `length` positions are real (right padding). */
export function poolRow(hidden: Float32Array, b: number, seq: number, dims: number, length: number, mode: PoolingMode): Float32Array {
  const base = b * seq * dims;
  if (mode === "cls") return hidden.slice(base, base + dims);
  if (mode === "lasttoken") return hidden.slice(base + (length - 1) * dims, base + length * dims);
  // The sum in float64, so the result does not depend on how far the row was padded or on summation order within it.
  const sum = new Float64Array(dims);
  for (let t = 0; t < length; t++) {
    const at = base + t * dims;
    for (let d = 0; d < dims; d++) sum[d]! += hidden[at + d]!;
  }
  return Float32Array.from(sum, (v) => v / length);
}

/** `v` scaled to unit length in place (sentence-transformers' Normalize: an all-zero vector stays zero). */
export function normalize(v: Float32Array): Float32Array {
  let sq = 0;
  for (const x of v) sq += x * x;
  const norm = Math.max(Math.sqrt(sq), 1e-12);
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}
