// ggml's 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): encoders with llama.cpp's reference rounding, and
// decoders bit for bit as ggml-quants.c's dequantize_row_* (blocks laid out as in ggml-common.h).
import { f32ToF16, readF16, writeF16 } from "./ggml-half.ts";

/** Elements per block of every type here. */
export const QK = 32;
export const Q4_0_BLOCK_BYTES = 2 + QK / 2;
export const Q4_1_BLOCK_BYTES = 4 + QK / 2;
export const Q5_0_BLOCK_BYTES = 2 + 4 + QK / 2;
export const Q5_1_BLOCK_BYTES = 4 + 4 + QK / 2;
export const Q8_0_BLOCK_BYTES = 2 + QK;

/** C's roundf: halves go away from zero. */
function roundHalfAway(v: number): number {
  return v < 0 ? -Math.round(-v) : Math.round(v);
}

/** The value of largest magnitude in x[b, b + 32), sign kept (the first such, as llama.cpp scans). */
function signedMax(x: Float32Array, b: number): number {
  let amax = 0, m = 0;
  for (let j = 0; j < QK; j++) {
    const v = x[b + j]!;
    if (Math.abs(v) > amax) (amax = Math.abs(v)), (m = v);
  }
  return m;
}

/**
 * Q8_0: per block d = max|x| / 127 and q = round(x / d) in [−127, 127]; x ≈ q · f16(d).
 * The error per value is at most d/2 (plus f16 rounding of d, at most 2^-11 relative, times 127).
 */
export function encodeQ8_0(x: Float32Array): Uint8Array {
  const out = new Uint8Array((x.length / QK) * Q8_0_BLOCK_BYTES);
  for (let b = 0, o = 0; b < x.length; b += QK, o += Q8_0_BLOCK_BYTES) {
    const d = Math.abs(signedMax(x, b)) / 127;
    const id = d ? 1 / d : 0;
    writeF16(out, o, f32ToF16(d));
    for (let j = 0; j < QK; j++) out[o + 2 + j] = roundHalfAway(x[b + j]! * id) & 0xff;
  }
  return out;
}

export function decodeQ8_0(bytes: Uint8Array, n: number, y: Float32Array): void {
  for (let b = 0, o = 0; b < n; b += QK, o += Q8_0_BLOCK_BYTES) {
    const d = readF16(bytes, o);
    for (let j = 0; j < QK; j++) y[b + j] = ((bytes[o + 2 + j]! << 24) >> 24) * d;
  }
}

/**
 * Q4_0 and Q5_0 (symmetric, 2^bits levels): m is the value of largest magnitude (sign kept) and d = m / −2^(bits−1), so
 * m itself encodes exactly as level 0; q = min(top, trunc(x/d + 2^(bits−1) + 0.5)) and x ≈ (q − 2^(bits−1)) · f16(d).
 * Byte j holds element j's low 4 bits in its low nibble and element j + 16's in its high nibble; Q5_0 keeps the 5th
 * bits in a little-endian u32 (bit j for element j). The error per value is at most |d|/2, except on the side opposite
 * m, whose top level is clipped: within |d| there.
 */
function encodeSymmetric(x: Float32Array, bits: 4 | 5): Uint8Array {
  const half = 1 << (bits - 1), top = (1 << bits) - 1;
  const blockBytes = bits === 4 ? Q4_0_BLOCK_BYTES : Q5_0_BLOCK_BYTES;
  const qs = bits === 4 ? 2 : 6;
  const out = new Uint8Array((x.length / QK) * blockBytes);
  for (let b = 0, o = 0; b < x.length; b += QK, o += blockBytes) {
    const d = signedMax(x, b) / -half;
    const id = d ? 1 / d : 0;
    writeF16(out, o, f32ToF16(d));
    let qh = 0;
    for (let j = 0; j < QK / 2; j++) {
      const lo = Math.min(top, Math.trunc(x[b + j]! * id + half + 0.5));
      const hi = Math.min(top, Math.trunc(x[b + j + QK / 2]! * id + half + 0.5));
      out[o + qs + j] = (lo & 0xf) | ((hi & 0xf) << 4);
      qh |= ((lo >> 4) << j) | ((hi >> 4) << (j + QK / 2));
    }
    if (bits === 5) for (let k = 0; k < 4; k++) out[o + 2 + k] = (qh >>> (8 * k)) & 0xff;
  }
  return out;
}

/**
 * Q4_1 and Q5_1 (affine): d = (max − min) / (2^bits − 1), q = min(top, trunc((x − min)/d + 0.5)), x ≈ q · f16(d) +
 * f16(min). The error per value is at most d/2 plus the f16 rounding of min and of d (times q ≤ top).
 */
function encodeAffine(x: Float32Array, bits: 4 | 5): Uint8Array {
  const top = (1 << bits) - 1;
  const blockBytes = bits === 4 ? Q4_1_BLOCK_BYTES : Q5_1_BLOCK_BYTES;
  const qs = bits === 4 ? 4 : 8;
  const out = new Uint8Array((x.length / QK) * blockBytes);
  for (let b = 0, o = 0; b < x.length; b += QK, o += blockBytes) {
    let min = Infinity, max = -Infinity;
    for (let j = 0; j < QK; j++) (min = Math.min(min, x[b + j]!)), (max = Math.max(max, x[b + j]!));
    const d = (max - min) / top;
    const id = d ? 1 / d : 0;
    writeF16(out, o, f32ToF16(d));
    writeF16(out, o + 2, f32ToF16(min));
    let qh = 0;
    for (let j = 0; j < QK / 2; j++) {
      const lo = Math.min(top, Math.trunc((x[b + j]! - min) * id + 0.5));
      const hi = Math.min(top, Math.trunc((x[b + j + QK / 2]! - min) * id + 0.5));
      out[o + qs + j] = (lo & 0xf) | ((hi & 0xf) << 4);
      qh |= ((lo >> 4) << j) | ((hi >> 4) << (j + QK / 2));
    }
    if (bits === 5) for (let k = 0; k < 4; k++) out[o + 4 + k] = (qh >>> (8 * k)) & 0xff;
  }
  return out;
}

export const encodeQ4_0 = (x: Float32Array) => encodeSymmetric(x, 4);
export const encodeQ5_0 = (x: Float32Array) => encodeSymmetric(x, 5);
export const encodeQ4_1 = (x: Float32Array) => encodeAffine(x, 4);
export const encodeQ5_1 = (x: Float32Array) => encodeAffine(x, 5);

export function decodeQ4_0(bytes: Uint8Array, n: number, y: Float32Array): void {
  for (let b = 0, o = 0; b < n; b += QK, o += Q4_0_BLOCK_BYTES) {
    const d = readF16(bytes, o);
    for (let j = 0; j < QK / 2; j++) {
      const q = bytes[o + 2 + j]!;
      y[b + j] = ((q & 0xf) - 8) * d;
      y[b + j + QK / 2] = ((q >> 4) - 8) * d;
    }
  }
}

export function decodeQ4_1(bytes: Uint8Array, n: number, y: Float32Array): void {
  for (let b = 0, o = 0; b < n; b += QK, o += Q4_1_BLOCK_BYTES) {
    const d = readF16(bytes, o), m = readF16(bytes, o + 2);
    for (let j = 0; j < QK / 2; j++) {
      const q = bytes[o + 4 + j]!;
      y[b + j] = (q & 0xf) * d + m;
      y[b + j + QK / 2] = (q >> 4) * d + m;
    }
  }
}

/** The 5th bits of a Q5 block: a little-endian u32 at `o`. */
function readQh(bytes: Uint8Array, o: number): number {
  return (bytes[o]! | (bytes[o + 1]! << 8) | (bytes[o + 2]! << 16) | (bytes[o + 3]! << 24)) >>> 0;
}

export function decodeQ5_0(bytes: Uint8Array, n: number, y: Float32Array): void {
  for (let b = 0, o = 0; b < n; b += QK, o += Q5_0_BLOCK_BYTES) {
    const d = readF16(bytes, o), qh = readQh(bytes, o + 2);
    for (let j = 0; j < QK / 2; j++) {
      const q = bytes[o + 6 + j]!;
      y[b + j] = (((q & 0xf) | (((qh >>> j) & 1) << 4)) - 16) * d;
      y[b + j + QK / 2] = (((q >> 4) | (((qh >>> (j + 16)) & 1) << 4)) - 16) * d;
    }
  }
}

export function decodeQ5_1(bytes: Uint8Array, n: number, y: Float32Array): void {
  for (let b = 0, o = 0; b < n; b += QK, o += Q5_1_BLOCK_BYTES) {
    const d = readF16(bytes, o), m = readF16(bytes, o + 2), qh = readQh(bytes, o + 4);
    for (let j = 0; j < QK / 2; j++) {
      const q = bytes[o + 8 + j]!;
      y[b + j] = ((q & 0xf) | (((qh >>> j) & 1) << 4)) * d + m;
      y[b + j + QK / 2] = ((q >> 4) | (((qh >>> (j + 16)) & 1) << 4)) * d + m;
    }
  }
}
