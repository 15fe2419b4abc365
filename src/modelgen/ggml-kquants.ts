// ggml's 256-element super-block types (Q2_K … Q6_K), decoded bit for bit as ggml-quants.c's dequantize_row_*; the
// block layouts are ggml-common.h's. Every decoder writes y[0, n) from whole blocks of `bytes`.
import { readF16 } from "./ggml-half.ts";

/** Elements per super-block. */
export const QK_K = 256;
/** Bytes per super-block, field by field as in ggml-common.h. */
export const Q2_K_BLOCK_BYTES = 16 + 64 + 2 + 2; // scales[16], qs[64], d, dmin
export const Q3_K_BLOCK_BYTES = 32 + 64 + 12 + 2; // hmask[32], qs[64], scales[12], d
export const Q4_K_BLOCK_BYTES = 2 + 2 + 12 + 128; // d, dmin, scales[12], qs[128]
export const Q5_K_BLOCK_BYTES = 2 + 2 + 12 + 32 + 128; // d, dmin, scales[12], qh[32], qs[128]
export const Q6_K_BLOCK_BYTES = 128 + 64 + 16 + 2; // ql[128], qh[64], scales[16] (int8), d

/**
 * Q2_K: 16 sub-blocks of 16; scales[i] holds sub-block i's 4-bit scale (low nibble) and min (high nibble); element e
 * is 2 bits of qs[32·(e/128) + e%32] at shift 2·((e/32)%4); x = d·sc·q − dmin·m.
 */
export function decodeQ2_K(bytes: Uint8Array, n: number, y: Float32Array): void {
  for (let b = 0, o = 0; b < n; b += QK_K, o += Q2_K_BLOCK_BYTES) {
    const d = readF16(bytes, o + 80), dmin = readF16(bytes, o + 82);
    for (let e = 0; e < QK_K; e += 16) {
      const sc = bytes[o + (e >> 4)]!;
      const dl = d * (sc & 0xf), ml = dmin * (sc >> 4);
      const q = o + 16 + 32 * (e >> 7) + (e & 31), shift = 2 * ((e >> 5) & 3);
      for (let l = 0; l < 16; l++) y[b + e + l] = dl * ((bytes[q + l]! >> shift) & 3) - ml;
    }
  }
}

/** The 16 six-bit scales of a Q3_K block (stored biased by 32): low nibbles in bytes 0..7, top 2 bits in bytes 8..11. */
function q3Scale(bytes: Uint8Array, s: number, i: number): number {
  const low = i < 8 ? bytes[s + i]! & 0xf : bytes[s + i - 8]! >> 4;
  const high = (bytes[s + 8 + (i & 3)]! >> (2 * (i >> 2))) & 3;
  return (low | (high << 4)) - 32;
}

/**
 * Q3_K: 16 sub-blocks of 16 with signed 6-bit scales; element e's low 2 bits are packed as Q2_K's, its high bit is bit
 * e/32 of hmask[e%32], and its value q − 4 (q = low | high << 2); x = d·sc·(q − 4).
 */
export function decodeQ3_K(bytes: Uint8Array, n: number, y: Float32Array): void {
  for (let b = 0, o = 0; b < n; b += QK_K, o += Q3_K_BLOCK_BYTES) {
    const d = readF16(bytes, o + 108);
    for (let e = 0; e < QK_K; e += 16) {
      const dl = d * q3Scale(bytes, o + 96, e >> 4);
      const q = o + 32 + 32 * (e >> 7) + (e & 31), shift = 2 * ((e >> 5) & 3);
      const hm = o + (e & 31), bit = e >> 5;
      for (let l = 0; l < 16; l++) y[b + e + l] = dl * (((bytes[q + l]! >> shift) & 3) - ((bytes[hm + l]! >> bit) & 1 ? 0 : 4));
    }
  }
}

/**
 * The 6-bit scale (`which` 0) or min (`which` 1) of sub-block j of a Q4_K/Q5_K block whose 12 scale bytes start at s
 * (ggml's get_scale_min_k4): sub-blocks 0..3 in the low 6 bits of bytes 0..7; 4..7 as nibbles of bytes 8..11 with
 * their top 2 bits in the top bits of bytes 0..7.
 */
function k4Scale(bytes: Uint8Array, s: number, j: number, which: 0 | 1): number {
  if (j < 4) return bytes[s + j + 4 * which]! & 63;
  const packed = bytes[s + j + 4]!;
  return (which ? packed >> 4 : packed & 0xf) | ((bytes[s + j - 4 + 4 * which]! >> 6) << 4);
}

/**
 * Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins; element 64j + l is the low nibble of qs[32j + l],
 * 64j + 32 + l its high nibble. Q5_K adds a 5th bit: bit 2j of qh[l] for element 64j + l, bit 2j + 1 for 64j + 32 + l.
 */
function decodeK45(bytes: Uint8Array, n: number, y: Float32Array, blockBytes: number, fifthBit: boolean): void {
  const qsAt = fifthBit ? 48 : 16;
  for (let b = 0, o = 0; b < n; b += QK_K, o += blockBytes) {
    const d = readF16(bytes, o), dmin = readF16(bytes, o + 2);
    for (let j = 0; j < 4; j++) {
      const d1 = d * k4Scale(bytes, o + 4, 2 * j, 0), m1 = dmin * k4Scale(bytes, o + 4, 2 * j, 1);
      const d2 = d * k4Scale(bytes, o + 4, 2 * j + 1, 0), m2 = dmin * k4Scale(bytes, o + 4, 2 * j + 1, 1);
      const q = o + qsAt + 32 * j, at = b + 64 * j;
      for (let l = 0; l < 32; l++) {
        const v = bytes[q + l]!, h = fifthBit ? bytes[o + 16 + l]! >> (2 * j) : 0;
        y[at + l] = d1 * ((v & 0xf) | ((h & 1) << 4)) - m1;
        y[at + 32 + l] = d2 * ((v >> 4) | ((h & 2) << 3)) - m2;
      }
    }
  }
}

export function decodeQ4_K(bytes: Uint8Array, n: number, y: Float32Array): void {
  decodeK45(bytes, n, y, Q4_K_BLOCK_BYTES, false);
}

export function decodeQ5_K(bytes: Uint8Array, n: number, y: Float32Array): void {
  decodeK45(bytes, n, y, Q5_K_BLOCK_BYTES, true);
}

/**
 * Q6_K: 16 sub-blocks of 16 with int8 scales; in each half (128 elements, 64 ql bytes, 32 qh bytes) element 32k + l
 * takes nibble k/2 of ql[l + 32·(k%2)] and bits 2k..2k+1 of qh[l]; x = d·sc·(q − 32).
 */
export function decodeQ6_K(bytes: Uint8Array, n: number, y: Float32Array): void {
  for (let b = 0, o = 0; b < n; b += QK_K, o += Q6_K_BLOCK_BYTES) {
    const d = readF16(bytes, o + 208);
    for (let half = 0; half < 2; half++) {
      const ql = o + 64 * half, qh = o + 128 + 32 * half, at = b + 128 * half;
      for (let k = 0; k < 4; k++) {
        const nib = (k >> 1) * 4, lq = ql + 32 * (k & 1);
        for (let s = 0; s < 2; s++) {
          const dl = d * ((bytes[o + 192 + 8 * half + 2 * k + s]! << 24) >> 24);
          for (let l = 16 * s; l < 16 * s + 16; l++) {
            const q = ((bytes[lq + l]! >> nib) & 0xf) | (((bytes[qh + l]! >> (2 * k)) & 3) << 4);
            y[at + 32 * k + l] = dl * (q - 32);
          }
        }
      }
    }
  }
}
