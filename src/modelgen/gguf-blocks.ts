// ggml's tensor encodings that kiln writes into GGUF files: F32, and the 32-element Q8_0 and Q4_0 blocks with an f16 scale.
import { float16Bits } from "./float16.ts";

/** ggml type ids as stored in a GGUF tensor info. */
export const GGML_TYPE = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8 } as const;
export type GgmlType = (typeof GGML_TYPE)[keyof typeof GGML_TYPE];

/** Elements per quantization block for Q4_0 and Q8_0. */
export const QK = 32;
/** Bytes per block: an f16 scale, then 32 int8 values (Q8_0) or 32 packed nibbles (Q4_0). */
export const Q8_0_BLOCK_BYTES = 2 + QK;
export const Q4_0_BLOCK_BYTES = 2 + QK / 2;

/** Bytes that `elements` values take in `type` (quantized types need whole blocks). */
export function ggmlBytes(type: GgmlType, elements: number): number {
  if (type === GGML_TYPE.F32) return elements * 4;
  if (type === GGML_TYPE.F16) return elements * 2;
  if (elements % QK !== 0) throw new Error(`ggml type ${type}: ${elements} elements are not whole ${QK}-element blocks`);
  return (elements / QK) * (type === GGML_TYPE.Q8_0 ? Q8_0_BLOCK_BYTES : Q4_0_BLOCK_BYTES);
}

/** IEEE half-precision bits of `x`, rounded to nearest even (as the scales are stored; the reader uses exactly these). */
export const f32ToF16 = float16Bits;

/** The value of half-precision bits `h`. */
export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/**
 * Q8_0: per block d = max|x| / 127 and q = round(x / d) in [−127, 127]; x ≈ q · f16(d).
 * The error per value is at most d/2 (plus f16 rounding of d, at most 2^-11 relative).
 */
export function encodeQ8_0(x: Float32Array): Uint8Array {
  const out = new Uint8Array(ggmlBytes(GGML_TYPE.Q8_0, x.length));
  const view = new DataView(out.buffer);
  for (let b = 0, o = 0; b < x.length; b += QK, o += Q8_0_BLOCK_BYTES) {
    let amax = 0;
    for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[b + j]!));
    const d = amax / 127;
    const id = d ? 1 / d : 0;
    view.setUint16(o, f32ToF16(d), true);
    for (let j = 0; j < QK; j++) view.setInt8(o + 2 + j, roundHalfAway(x[b + j]! * id));
  }
  return out;
}

/**
 * Q4_0: per block, m is the value of largest magnitude (sign kept) and d = m / −8, so m itself encodes exactly as 0;
 * q = min(15, ⌊x/d + 8.5⌋) and x ≈ (q − 8) · f16(d). Byte j holds element j in its low nibble and element j + 16 in
 * its high nibble. The error per value is at most |d|/2 (the top value 16 is clipped to 15, still within |d|).
 */
export function encodeQ4_0(x: Float32Array): Uint8Array {
  const out = new Uint8Array(ggmlBytes(GGML_TYPE.Q4_0, x.length));
  const view = new DataView(out.buffer);
  for (let b = 0, o = 0; b < x.length; b += QK, o += Q4_0_BLOCK_BYTES) {
    let m = 0;
    for (let j = 0; j < QK; j++) if (Math.abs(x[b + j]!) > Math.abs(m)) m = x[b + j]!;
    const d = m / -8;
    const id = d ? 1 / d : 0;
    view.setUint16(o, f32ToF16(d), true);
    const nibble = (v: number) => Math.min(15, Math.trunc(v * id + 8.5));
    for (let j = 0; j < QK / 2; j++) out[o + 2 + j] = nibble(x[b + j]!) | (nibble(x[b + j + QK / 2]!) << 4);
  }
  return out;
}

/** Encodes `x` (a whole number of rows whose length is a multiple of 32 for quantized types) as `type`. */
export function encodeTensor(type: GgmlType, x: Float32Array): Uint8Array {
  if (type === GGML_TYPE.F32) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (type === GGML_TYPE.Q8_0) return encodeQ8_0(x);
  if (type === GGML_TYPE.Q4_0) return encodeQ4_0(x);
  throw new Error(`kiln does not write ggml type ${type}`);
}

/** Decodes Q8_0 or Q4_0 blocks back to values (for tests and error bounds). */
export function decodeBlocks(type: GgmlType, bytes: Uint8Array, elements: number): Float32Array {
  const out = new Float32Array(elements);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const blockBytes = type === GGML_TYPE.Q8_0 ? Q8_0_BLOCK_BYTES : Q4_0_BLOCK_BYTES;
  for (let b = 0, o = 0; b < elements; b += QK, o += blockBytes) {
    const d = f16ToF32(view.getUint16(o, true));
    for (let j = 0; j < QK; j++) {
      if (type === GGML_TYPE.Q8_0) out[b + j] = view.getInt8(o + 2 + j) * d;
      else out[b + j] = (((bytes[o + 2 + (j % 16)]! >> (j < 16 ? 0 : 4)) & 0xf) - 8) * d;
    }
  }
  return out;
}

/** C's roundf: halves go away from zero. */
function roundHalfAway(v: number): number {
  return v < 0 ? -Math.round(-v) : Math.round(v);
}
