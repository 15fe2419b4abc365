// Half-precision (f16) and bfloat16 scalars as ggml stores them: a table for fast decoding, and rounding helpers.
import { float16Bits } from "./float16.ts";

/** The f32 value of every f16 bit pattern, so block decoders read a scale with one lookup. */
const F16_TABLE = (() => {
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) t[h] = sign * mant * 2 ** -24;
    else if (exp === 0x1f) t[h] = mant ? NaN : sign * Infinity;
    else t[h] = sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return t;
})();

/** IEEE half-precision bits of `x`, rounded to nearest even (as ggml's scales are stored). */
export const f32ToF16 = float16Bits;

/** The value of half-precision bits `h`. */
export function f16ToF32(h: number): number {
  return F16_TABLE[h & 0xffff]!;
}

/** The f16 at `bytes[o]` (little-endian), read without a DataView so any byte offset works. */
export function readF16(bytes: Uint8Array, o: number): number {
  return F16_TABLE[bytes[o]! | (bytes[o + 1]! << 8)]!;
}

/** Writes the f16 bits `h` little-endian at `bytes[o]`. */
export function writeF16(bytes: Uint8Array, o: number, h: number): void {
  bytes[o] = h & 0xff;
  bytes[o + 1] = h >>> 8;
}

/**
 * f16 bits of a non-negative `x` rounded up in magnitude (never below x): a super-block scale stored this way keeps
 * every sub-block scale within its integer range.
 */
export function f16AtLeast(x: number): number {
  const h = float16Bits(x);
  return F16_TABLE[h]! < x ? h + 1 : h;
}

/** f16 values of `n` little-endian halves at `bytes` into `out`. */
export function decodeF16(bytes: Uint8Array, n: number, out: Float32Array): void {
  for (let i = 0, o = 0; i < n; i++, o += 2) out[i] = F16_TABLE[bytes[o]! | (bytes[o + 1]! << 8)]!;
}

export function encodeF16(x: Float32Array): Uint8Array {
  const out = new Uint8Array(x.length * 2);
  for (let i = 0; i < x.length; i++) writeF16(out, 2 * i, float16Bits(x[i]!));
  return out;
}

/** bfloat16 is the top half of an f32: decoding shifts each value into place. */
export function decodeBf16(bytes: Uint8Array, n: number, out: Float32Array): void {
  const u = new Uint32Array(out.buffer, out.byteOffset, n);
  for (let i = 0, o = 0; i < n; i++, o += 2) u[i] = ((bytes[o]! | (bytes[o + 1]! << 8)) << 16) >>> 0;
}

/** f32 → bfloat16 rounded to nearest even, NaN kept quiet (ggml's fp32_to_bf16). */
export function encodeBf16(x: Float32Array): Uint8Array {
  const u = new Uint32Array(Float32Array.from(x).buffer);
  const out = new Uint8Array(x.length * 2);
  for (let i = 0; i < x.length; i++) {
    const b = u[i]!;
    const h = (b & 0x7fffffff) > 0x7f800000 ? (b >>> 16) | 64 : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
    writeF16(out, 2 * i, h & 0xffff);
  }
  return out;
}
