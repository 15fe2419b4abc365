// float32 ⇄ IEEE half conversions for graphs whose inputs or outputs are float16 (converted at the session boundary).
import { f32ToF16 } from "../../src/modelgen/gguf-blocks.ts";
import { halfToFloat } from "../text/ort-runner.ts";

export { halfToFloat };

/** One float32 value's nearest half (ties to even), as its 16-bit word: the builder's own conversion (GGUF scales). */
export const toHalfBits = f32ToF16;

export function floatToHalf(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = toHalfBits(values[i]!);
  return out;
}
