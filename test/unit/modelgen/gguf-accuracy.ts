// How far a GGUF file's weights are from the F32 file's, and the logit correlation that much rounding still owes:
// the yardsticks of the llama.cpp tests, derived from each format's per-value error bound, never from a CPU's figures.
import type { ModelSpec } from "../../../src/modelgen/index.ts";
import { decodeTensor, GGML_TYPE } from "../../../src/modelgen/gguf-blocks.ts";
import { errorBounds } from "./ggml-bounds.ts";
import { readGguf } from "./gguf-whole.ts";

/**
 * Relative RMS error of `qPath`'s weights against the F32 file's, over every tensor not stored as F32 (or only those
 * of `onlyType`): `eps` as measured, `bound` as the encoders' per-value bounds allow on these very weights.
 */
export function weightError(f32Path: string, qPath: string, onlyType?: number): { eps: number; bound: number } {
  const ref = readGguf(f32Path), q = readGguf(qPath);
  let err = 0, allowed = 0, norm = 0;
  q.tensors.forEach((t, i) => {
    if (t.type === GGML_TYPE.F32 || (onlyType !== undefined && t.type !== onlyType)) return;
    const n = t.dims.reduce((a, d) => a * d, 1);
    const r = ref.tensors[i]!;
    const w = new Float32Array(ref.bytes.slice(r.at, r.at + n * 4).buffer);
    const d = decodeTensor(t.type, q.bytes.subarray(t.at), n);
    const b = errorBounds(t.type, w);
    for (let j = 0; j < n; j++) (err += (d[j]! - w[j]!) ** 2), (allowed += b[j]! ** 2), (norm += w[j]! ** 2);
  });
  return { eps: Math.sqrt(err / norm), bound: Math.sqrt(allowed / norm) };
}

/**
 * The correlation a format must reach. Each of the M matmuls on the way to the logits sees weights off by a relative
 * RMS ε (the format's rounding, within its bound by construction), and on CPU llama.cpp rounds the activations to 8
 * bits as well (Q8_0's ε again). Independent errors add in quadrature, so the logits carry noise of about
 * ρ = √(M(ε² + ε8²)) of their spread; r = 1/√(1 + ρ²) at that noise. A factor of 2 on ρ covers amplification through
 * the norms and softmax. No CPU's figures enter, and summation order (the only thing AVX2, AVX-512 and VNNI kernels
 * change) moves r by far less than this margin.
 */
export function requiredCorrelation(spec: ModelSpec, eps: number, eps8: number): number {
  const matmuls = spec.layers * 7 + 1;
  const rho = 2 * Math.sqrt(matmuls * (eps * eps + eps8 * eps8));
  return 1 / Math.sqrt(1 + rho * rho);
}
