// Per-value error bounds of kiln's ggml encoders, computed from the data alone (the block's extremes), never from the
// encoded bytes: what a test holds each encoder to, and what the llama.cpp test derives its correlation bound from.
import { GGML_TYPE } from "../../../src/modelgen/gguf-blocks.ts";

/** f16's relative rounding (half an ulp of an 11-bit significand) and its absolute floor (half the smallest subnormal). */
const F16_REL = 2 ** -11, F16_ABS = 2 ** -25;
/** Slack for f32 arithmetic in the encoder and decoder: a few ulps of the block's largest value. */
const SLACK = 2 ** -20;
/** f16AtLeast rounds a super-block scale up by less than one f16 ulp (2^-10 relative, or the smallest subnormal). */
const up = (v: number) => v * (1 + 2 ** -10) + 2 ** -24;

function amaxOf(x: Float32Array, b: number, n: number): number {
  let a = 0;
  for (let j = 0; j < n; j++) a = Math.max(a, Math.abs(x[b + j]!));
  return a;
}

/** The largest |x − decode(encode(x))| each element of `x` may show in `type`. */
export function errorBounds(type: number, x: Float32Array): Float32Array {
  const out = new Float32Array(x.length);
  const each = (block: number, f: (b: number) => void) => {
    for (let b = 0; b < x.length; b += block) f(b);
  };
  switch (type) {
    case GGML_TYPE.F32:
      return out;
    case GGML_TYPE.F16:
      for (let i = 0; i < x.length; i++) out[i] = Math.abs(x[i]!) * F16_REL + F16_ABS;
      return out;
    case GGML_TYPE.BF16:
      for (let i = 0; i < x.length; i++) out[i] = Math.abs(x[i]!) * 2 ** -8;
      return out;
    case GGML_TYPE.Q8_0:
      // Half a step of d = amax/127, plus d's f16 rounding times |q| ≤ 127.
      each(32, (b) => {
        const d = amaxOf(x, b, 32) / 127;
        out.fill(d / 2 + 127 * (d * F16_REL + F16_ABS) + SLACK * 127 * d, b, b + 32);
      });
      return out;
    case GGML_TYPE.Q4_0:
    case GGML_TYPE.Q5_0: {
      // d = m/−half: half a step on m's side, a whole step on the other (its top level is clipped); plus f16(d)'s rounding.
      const half = type === GGML_TYPE.Q4_0 ? 8 : 16;
      each(32, (b) => {
        let m = 0;
        for (let j = 0; j < 32; j++) if (Math.abs(x[b + j]!) > Math.abs(m)) m = x[b + j]!;
        const d = Math.abs(m) / half, scale = half * (d * F16_REL + F16_ABS) + SLACK * Math.abs(m);
        for (let j = 0; j < 32; j++) out[b + j] = (x[b + j]! * m < 0 ? d : d / 2) + scale;
      });
      return out;
    }
    case GGML_TYPE.IQ4_NL:
      // d = m/−127 (stored in f16); the nearest level is within 11.5 steps of d on m's side, 14 on the other.
      each(32, (b) => {
        let m = 0;
        for (let j = 0; j < 32; j++) if (Math.abs(x[b + j]!) > Math.abs(m)) m = x[b + j]!;
        const d = (Math.abs(m) / 127) * (1 + F16_REL) + F16_ABS;
        for (let j = 0; j < 32; j++) out[b + j] = (x[b + j]! * m < 0 ? 14 : 11.5) * d + SLACK * Math.abs(m);
      });
      return out;
    case GGML_TYPE.Q4_1:
    case GGML_TYPE.Q5_1: {
      // Half a step of d = (max − min)/top, plus the f16 rounding of min and of d (times q ≤ top).
      const top = type === GGML_TYPE.Q4_1 ? 15 : 31;
      each(32, (b) => {
        let min = Infinity, max = -Infinity;
        for (let j = 0; j < 32; j++) (min = Math.min(min, x[b + j]!)), (max = Math.max(max, x[b + j]!));
        const d = (max - min) / top;
        out.fill(d / 2 + Math.abs(min) * F16_REL + F16_ABS + top * (d * F16_REL + F16_ABS) + SLACK * amaxOf(x, b, 32), b, b + 32);
      });
      return out;
    }
    case GGML_TYPE.Q2_K:
    case GGML_TYPE.Q4_K:
    case GGML_TYPE.Q5_K:
      affineBounds(x, out, type === GGML_TYPE.Q2_K ? 16 : 32, type === GGML_TYPE.Q2_K ? 3 : type === GGML_TYPE.Q4_K ? 15 : 31, type === GGML_TYPE.Q2_K ? 15 : 63);
      return out;
    case GGML_TYPE.Q3_K:
    case GGML_TYPE.Q6_K:
      symmetricBounds(x, out, type === GGML_TYPE.Q3_K ? 4 : 32, type === GGML_TYPE.Q3_K ? 31 : 127);
      return out;
  }
  throw new Error(`no error bound for ggml type ${type}`);
}

/**
 * Affine K-quants (Q2_K, Q4_K, Q5_K): the min is rounded up to a multiple of dmin ≤ up(max min / smax), the sub-block
 * scale s = (max + that min)/levels rounded up to a multiple of d ≤ up(max s / smax), and nothing is clipped, so the
 * error is half the effective step: at most (s + d)/2.
 */
function affineBounds(x: Float32Array, out: Float32Array, sub: number, levels: number, smax: number): void {
  for (let b = 0; b < x.length; b += 256) {
    const mn: number[] = [], mx: number[] = [];
    for (let i = 0; i < 256 / sub; i++) {
      let lo = 0, hi = -Infinity;
      for (let l = 0; l < sub; l++) (lo = Math.min(lo, x[b + i * sub + l]!)), (hi = Math.max(hi, x[b + i * sub + l]!));
      mn.push(-lo), mx.push(hi);
    }
    const dmin = up(Math.max(...mn) / smax);
    const s = mn.map((m, i) => Math.max(0, mx[i]! + m + dmin) / levels);
    const d = up(Math.max(...s) / smax);
    const slack = SLACK * amaxOf(x, b, 256);
    s.forEach((si, i) => out.fill((si + d) / 2 + slack, b + i * sub, b + (i + 1) * sub));
  }
}

/**
 * Symmetric K-quants (Q3_K, Q6_K): sub-blocks of 16 whose |scale| is at most amax/(half − ½), rounded up to a multiple
 * of d ≤ up(max |scale| / smax); nothing is clipped past half a step, so the error is at most (|s| + d)/2.
 */
function symmetricBounds(x: Float32Array, out: Float32Array, half: number, smax: number): void {
  for (let b = 0; b < x.length; b += 256) {
    const s = Array.from({ length: 16 }, (_, i) => amaxOf(x, b + 16 * i, 16) / (half - 0.5));
    const d = up(Math.max(...s) / smax);
    const slack = SLACK * amaxOf(x, b, 256);
    s.forEach((si, i) => out.fill((si + d) / 2 + slack, b + 16 * i, b + 16 * (i + 1)));
  }
}
