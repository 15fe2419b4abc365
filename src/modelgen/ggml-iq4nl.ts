// ggml's IQ4_NL: Q4_0's 32-element block and nibble layout, but each nibble indexes a fixed non-linear table of levels.
// Real GGUFs carry it where older llama.cpp quantizers fell back from Q2_K/Q3_K (rows not whole 256-blocks).
import { f32ToF16, readF16, writeF16 } from "./ggml-half.ts";
import { QK } from "./ggml-legacy.ts";

export const IQ4_NL_BLOCK_BYTES = 2 + QK / 2;
/** ggml-common.h's kvalues_iq4nl: the levels a nibble stands for, times the block's f16 scale. */
const LEVELS = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];

export function decodeIQ4_NL(bytes: Uint8Array, n: number, y: Float32Array): void {
  for (let b = 0, o = 0; b < n; b += QK, o += IQ4_NL_BLOCK_BYTES) {
    const d = readF16(bytes, o);
    for (let j = 0; j < QK / 2; j++) {
      const q = bytes[o + 2 + j]!;
      y[b + j] = LEVELS[q & 0xf]! * d;
      y[b + j + QK / 2] = LEVELS[q >> 4]! * d;
    }
  }
}

/** The nibble whose level is nearest t. */
function nearest(t: number): number {
  let best = 0;
  for (let k = 1; k < 16; k++) if (Math.abs(LEVELS[k]! - t) < Math.abs(LEVELS[best]! - t)) best = k;
  return best;
}

/**
 * Not llama.cpp's searching quantizer: d = m / −127 for the block's value of largest magnitude m (so m is level −127
 * exactly) and each value takes the nearest level of x/d. The error per value is at most half the widest gap between
 * levels on m's side, 11.5·|d|, and 14·|d| on the other (past its top level, 113); with d as stored in f16.
 */
export function encodeIQ4_NL(x: Float32Array): Uint8Array {
  const out = new Uint8Array((x.length / QK) * IQ4_NL_BLOCK_BYTES);
  for (let b = 0, o = 0; b < x.length; b += QK, o += IQ4_NL_BLOCK_BYTES) {
    let m = 0;
    for (let j = 0; j < QK; j++) if (Math.abs(x[b + j]!) > Math.abs(m)) m = x[b + j]!;
    const h = f32ToF16(m / -127);
    writeF16(out, o, h);
    const d = readF16(out, o), id = d ? 1 / d : 0;
    for (let j = 0; j < QK / 2; j++) out[o + 2 + j] = nearest(x[b + j]! * id) | (nearest(x[b + j + QK / 2]! * id) << 4);
  }
  return out;
}
