// float32 ⇄ IEEE half conversions for graphs whose inputs or outputs are float16 (converted at the session boundary).
import { halfToFloat } from "../engine/ort-runner.ts";

export { halfToFloat };

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** One float32 value's nearest half (ties to even), as its 16-bit word; overflow gives ±Infinity, NaN stays NaN. */
export function toHalfBits(value: number): number {
  f32[0] = value;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half: shift the full 24-bit significand down, rounding on the bits shifted out.
    const shift = 14 - e;
    if (shift > 24) return sign;
    const m = mant | 0x800000;
    let half = m >>> shift;
    const rem = m & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && half & 1)) half++;
    return sign | half;
  }
  // A carry out of the mantissa correctly bumps the exponent (up to Infinity).
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++;
  return sign | half;
}

export function floatToHalf(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = toHalfBits(values[i]!);
  return out;
}
