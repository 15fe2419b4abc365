// A 4-bit source reaches kiln's 4-bit format without a detour: Q4_0 blocks re-quantized by kiln's q4 rule (the sink's
// quantizeQ4Rows) come back as the very same values; other 4- and 5-bit types lose at most half of one q4 step.
import { expect, test } from "bun:test";
import { decodeTensor, encodeTensor, GGML_TYPE } from "../../../../src/modelgen/gguf-blocks.ts";
import { dequantizeQ4, quantizeQ4Rows, q4Layout } from "../../../../src/modelgen/quantize.ts";
import { tensorRng } from "../../../../src/modelgen/rng.ts";

const ROWS = 64, K = 256;

function weights(name: string): Float32Array {
  const w = new Float32Array(ROWS * K);
  tensorRng(3, name).fillNormal(w, 0.05);
  return w;
}

/** kiln's q4 of `x` (block 32, symmetric, f32 scales), decoded as MatMulNBits computes it. */
function kilnQ4(x: Float32Array): { values: Float32Array; scales: Float32Array } {
  const l = q4Layout(ROWS, K, 32);
  const q = new Uint8Array(l.qBytes);
  const scales = new Float32Array(l.scaleCount);
  quantizeQ4Rows(x, ROWS, K, q, scales, 32);
  return { values: dequantizeQ4(ROWS, K, q, scales, 32), scales };
}

test("Q4_0 → kiln q4 is lossless: every value the file decodes to is kept exactly", () => {
  const source = decodeTensor(GGML_TYPE.Q4_0, encodeTensor(GGML_TYPE.Q4_0, weights("q4_0")), ROWS * K);
  const { values } = kilnQ4(source);
  expect(values).toEqual(source);
});

test.each([["Q4_1", GGML_TYPE.Q4_1], ["Q5_0", GGML_TYPE.Q5_0], ["Q4_K", GGML_TYPE.Q4_K], ["Q5_K", GGML_TYPE.Q5_K], ["Q6_K", GGML_TYPE.Q6_K]] as const)(
  "%s → kiln q4 is one rounding of the decoded values: within one q4 step per value, half a step in RMS",
  (_name, type) => {
    const source = decodeTensor(type, encodeTensor(type, weights(String(type))), ROWS * K);
    const { values, scales } = kilnQ4(source);
    for (let i = 0; i < source.length; i++) {
      const step = Math.abs(scales[Math.floor(i / 32)]!);
      // Half a step, or a whole one for the value clipped from level 16 to 15 (the block's largest of the other sign).
      expect(Math.abs(values[i]! - source[i]!)).toBeLessThanOrEqual(step + 1e-12);
    }
    const rms = (a: Float32Array, b: Float32Array) => Math.sqrt(a.reduce((s, v, i) => s + (v - b[i]!) ** 2, 0) / a.length);
    const meanStep = scales.reduce((s, d) => s + Math.abs(d), 0) / scales.length;
    expect(rms(values, source)).toBeLessThan(meanStep / 2);
  },
);
