// float32 → IEEE binary16 bit patterns (round to nearest, ties to even), for fp16 weights and tables.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * One value's half-precision bits. Written out rather than taken from Float16Array so that the bytes of a build do
 * not depend on the runtime (Bun has Float16Array, older Nodes do not); the unit test checks it against Float16Array.
 */
export function float16Bits(x: number): number {
  f32[0] = x;
  const b = u32[0]!;
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  const mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 112; // rebias 127 → 15
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half: the full significand (implicit 1 included) shifted down, rounded; below 2^-25 it is ±0.
    if (e < -10) return sign;
    const full = mant | 0x800000;
    const shift = 14 - e;
    const h = full >>> shift;
    const rem = full & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (h + (rem > mid || (rem === mid && h & 1) ? 1 : 0));
  }
  const h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  // A carry out of the significand rolls into the exponent, up to infinity: the right rounding.
  return sign | (h + (rem > 0x1000 || (rem === 0x1000 && h & 1) ? 1 : 0));
}

export function toFloat16(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float16Bits(values[i]!);
  return out;
}

/** Half bits back to numbers (tests and readers of fp16 outputs). */
export function fromFloat16(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i]!;
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >>> 10) & 0x1f;
    const m = h & 0x3ff;
    out[i] = e === 0 ? s * m * 2 ** -24 : e === 0x1f ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
  }
  return out;
}
