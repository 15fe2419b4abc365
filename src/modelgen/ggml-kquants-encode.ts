// Encoders for ggml's K-quant super-blocks (Q2_K … Q6_K). Not llama.cpp's searching quantizers: each rounds its scales
// up, so every sub-block's range covers its values and no value is clipped, which gives a simple per-value bound:
// half a step of the sub-block's effective scale, which the data alone bounds (test/unit/modelgen/ggml-bounds.ts).
import { f16AtLeast, f16ToF32, writeF16 } from "./ggml-half.ts";
import { Q2_K_BLOCK_BYTES, Q3_K_BLOCK_BYTES, Q4_K_BLOCK_BYTES, Q5_K_BLOCK_BYTES, Q6_K_BLOCK_BYTES, QK_K } from "./ggml-kquants.ts";

/** Levels L[e] in [0, levels] and per-sub-block integer scales and mins, with the super-block's f16 d and dmin bits. */
interface Affine { L: Uint8Array; sc: Uint8Array; mq: Uint8Array; d: number; dmin: number }

/**
 * x ≈ d·sc·L − dmin·mq per sub-block of `sub` values. The min is quantized first, rounded up (dmin·mq ≥ −min x), then
 * the scale from the range it leaves, rounded up too (d·sc ≥ (max x + dmin·mq) / levels): L = round((x + dmin·mq) / (d·sc)).
 */
function affine(x: Float32Array, b: number, sub: number, levels: number, smax: number): Affine {
  const n = QK_K / sub;
  const L = new Uint8Array(QK_K), sc = new Uint8Array(n), mq = new Uint8Array(n);
  const mn = new Float64Array(n), mx = new Float64Array(n), s = new Float64Array(n);
  let mnMax = 0;
  for (let i = 0; i < n; i++) {
    let lo = 0, hi = -Infinity;
    for (let l = 0; l < sub; l++) (lo = Math.min(lo, x[b + i * sub + l]!)), (hi = Math.max(hi, x[b + i * sub + l]!));
    (mn[i] = -lo), (mx[i] = hi), (mnMax = Math.max(mnMax, -lo));
  }
  const dminBits = f16AtLeast(mnMax / smax), dmin = f16ToF32(dminBits);
  let sMax = 0;
  for (let i = 0; i < n; i++) {
    mq[i] = dmin ? Math.min(smax, Math.ceil(mn[i]! / dmin)) : 0;
    s[i] = Math.max(0, (mx[i]! + Math.fround(dmin * mq[i]!)) / levels);
    sMax = Math.max(sMax, s[i]!);
  }
  const dBits = f16AtLeast(sMax / smax), d = f16ToF32(dBits);
  for (let i = 0; i < n; i++) {
    sc[i] = d ? Math.min(smax, Math.ceil(s[i]! / d)) : 0;
    const ds = Math.fround(d * sc[i]!), dm = Math.fround(dmin * mq[i]!);
    for (let l = 0, e = i * sub; l < sub; l++, e++) L[e] = ds ? Math.max(0, Math.min(levels, Math.round((x[b + e]! + dm) / ds))) : 0;
  }
  return { L, sc, mq, d: dBits, dmin: dminBits };
}

/**
 * Symmetric sub-blocks of 16: x ≈ d·sc·(L − half), L in [0, 2·half). The scale is signed so the value of largest
 * magnitude lands on level −half, and large enough that the opposite side stays within half − ½ levels; rounded up.
 */
function symmetric(x: Float32Array, b: number, half: number, smax: number): { L: Uint8Array; sc: Int8Array; d: number } {
  const L = new Uint8Array(QK_K), sc = new Int8Array(16), s = new Float64Array(16);
  let sMax = 0;
  for (let i = 0; i < 16; i++) {
    let m = 0;
    for (let l = 0; l < 16; l++) if (Math.abs(x[b + 16 * i + l]!) > Math.abs(m)) m = x[b + 16 * i + l]!;
    let opp = 0;
    for (let l = 0; l < 16; l++) if (x[b + 16 * i + l]! * m < 0) opp = Math.max(opp, Math.abs(x[b + 16 * i + l]!));
    s[i] = -Math.sign(m) * Math.max(Math.abs(m) / half, opp / (half - 0.5));
    sMax = Math.max(sMax, Math.abs(s[i]!));
  }
  const dBits = f16AtLeast(sMax / smax), d = f16ToF32(dBits);
  for (let i = 0; i < 16; i++) {
    sc[i] = d ? Math.sign(s[i]!) * Math.min(smax, Math.ceil(Math.abs(s[i]!) / d)) : 0;
    const ds = Math.fround(d * sc[i]!);
    for (let l = 0, e = 16 * i; l < 16; l++, e++) L[e] = half + (ds ? Math.max(-half, Math.min(half - 1, Math.round(x[b + e]! / ds))) : 0);
  }
  return { L, sc, d: dBits };
}

/** Low 2 bits of levels as Q2_K and Q3_K pack them: element e at shift 2·((e/32)%4) of qs[32·(e/128) + e%32]. */
function pack2(L: Uint8Array, out: Uint8Array, qs: number): void {
  for (let e = 0; e < QK_K; e++) out[qs + 32 * (e >> 7) + (e & 31)]! |= (L[e]! & 3) << (2 * ((e >> 5) & 3));
}

export function encodeQ2_K(x: Float32Array): Uint8Array {
  const out = new Uint8Array((x.length / QK_K) * Q2_K_BLOCK_BYTES);
  for (let b = 0, o = 0; b < x.length; b += QK_K, o += Q2_K_BLOCK_BYTES) {
    const a = affine(x, b, 16, 3, 15);
    for (let i = 0; i < 16; i++) out[o + i] = a.sc[i]! | (a.mq[i]! << 4);
    pack2(a.L, out, o + 16);
    writeF16(out, o + 80, a.d);
    writeF16(out, o + 82, a.dmin);
  }
  return out;
}

export function encodeQ3_K(x: Float32Array): Uint8Array {
  const out = new Uint8Array((x.length / QK_K) * Q3_K_BLOCK_BYTES);
  for (let b = 0, o = 0; b < x.length; b += QK_K, o += Q3_K_BLOCK_BYTES) {
    const a = symmetric(x, b, 4, 31);
    for (let e = 0; e < QK_K; e++) out[o + (e & 31)]! |= (a.L[e]! >> 2) << (e >> 5);
    pack2(a.L, out, o + 32);
    for (let i = 0; i < 16; i++) {
      const v = a.sc[i]! + 32;
      out[o + 96 + (i & 7)]! |= (v & 0xf) << (i < 8 ? 0 : 4);
      out[o + 104 + (i & 3)]! |= (v >> 4) << (2 * (i >> 2));
    }
    writeF16(out, o + 108, a.d);
  }
  return out;
}

/** Q4_K/Q5_K's 12 scale bytes (the inverse of get_scale_min_k4) at out[s]. */
function packK4(sc: Uint8Array, mq: Uint8Array, out: Uint8Array, s: number): void {
  for (let j = 0; j < 4; j++) {
    out[s + j] = sc[j]! | ((sc[j + 4]! >> 4) << 6);
    out[s + j + 4] = mq[j]! | ((mq[j + 4]! >> 4) << 6);
    out[s + j + 8] = (sc[j + 4]! & 0xf) | ((mq[j + 4]! & 0xf) << 4);
  }
}

/** Q4_K (bits 4) and Q5_K (bits 5): sub-blocks of 32, element 64j + l in the low nibble of qs[32j + l], 64j + 32 + l high. */
function encodeK4(x: Float32Array, bits: 4 | 5): Uint8Array {
  const blockBytes = bits === 4 ? Q4_K_BLOCK_BYTES : Q5_K_BLOCK_BYTES;
  const qs = bits === 4 ? 16 : 48;
  const out = new Uint8Array((x.length / QK_K) * blockBytes);
  for (let b = 0, o = 0; b < x.length; b += QK_K, o += blockBytes) {
    const a = affine(x, b, 32, (1 << bits) - 1, 63);
    writeF16(out, o, a.d);
    writeF16(out, o + 2, a.dmin);
    packK4(a.sc, a.mq, out, o + 4);
    for (let j = 0; j < 4; j++)
      for (let l = 0; l < 32; l++) {
        const lo = a.L[64 * j + l]!, hi = a.L[64 * j + 32 + l]!;
        out[o + qs + 32 * j + l] = (lo & 0xf) | ((hi & 0xf) << 4);
        if (bits === 5) out[o + 16 + l]! |= ((lo >> 4) << (2 * j)) | ((hi >> 4) << (2 * j + 1));
      }
  }
  return out;
}

export const encodeQ4_K = (x: Float32Array) => encodeK4(x, 4);
export const encodeQ5_K = (x: Float32Array) => encodeK4(x, 5);

export function encodeQ6_K(x: Float32Array): Uint8Array {
  const out = new Uint8Array((x.length / QK_K) * Q6_K_BLOCK_BYTES);
  for (let b = 0, o = 0; b < x.length; b += QK_K, o += Q6_K_BLOCK_BYTES) {
    const a = symmetric(x, b, 32, 127);
    for (let e = 0; e < QK_K; e++) {
      const half = e >> 7, k = (e >> 5) & 3, l = e & 31, v = a.L[e]!;
      out[o + 64 * half + 32 * (k & 1) + l]! |= (v & 0xf) << (4 * (k >> 1));
      out[o + 128 + 32 * half + l]! |= (v >> 4) << (2 * k);
    }
    for (let i = 0; i < 16; i++) out[o + 192 + i] = a.sc[i]! & 0xff;
    writeF16(out, o + 208, a.d);
  }
  return out;
}
