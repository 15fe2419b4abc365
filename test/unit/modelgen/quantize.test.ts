// Quantizers: exact nibble/scale layout, checked by hand and against onnxruntime's MatMulNBits and
// DynamicQuantizeMatMul, with tolerances from each format's error bound (never from one CPU's results).
import { describe, expect, test } from "bun:test";
import * as ort from "onnxruntime-node";
import { decodeTensor, encodeQ4_0, GGML_TYPE } from "../../../src/modelgen/gguf-blocks.ts";
import { GraphBuilder, int, T } from "../../../src/modelgen/onnx-builder.ts";
import { dequantizeQ4, INT8_MAX_LEVEL, q4Layout, quantizeInt8Rows, quantizeQ4Rows, transpose } from "../../../src/modelgen/quantize.ts";
import { Rng } from "../../../src/modelgen/rng.ts";

const randomMatrix = (n: number, k: number, seed: number) => {
  const w = new Float32Array(n * k);
  new Rng(seed).fillNormal(w, 0.5);
  return w;
};

describe("q4 quantization", () => {
  test("packs levels low nibble first, symmetric per block: d = m / −8 for m the value of largest magnitude", () => {
    // One row, one block: values (i − 8) × 0.1 → m = −0.8, d = 0.1, level i at element i.
    const w = Float32Array.from({ length: 32 }, (_, i) => ((i % 16) - 8) * 0.1);
    const q = new Uint8Array(16), s = new Float32Array(1);
    quantizeQ4Rows(w, 1, 32, q, s);
    expect(s[0]).toBeCloseTo(0.1, 6);
    expect(Array.from(q.subarray(0, 8))).toEqual([0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe]);
    // Positive extreme: d is negative, so the extreme is level 0 and exact, and 0 is level 8 and exact.
    const pos = Float32Array.from({ length: 32 }, (_, i) => i * 0.05);
    quantizeQ4Rows(pos, 1, 32, q, s);
    expect(s[0]).toBeLessThan(0);
    expect(q[15]! >> 4).toBe(0);
    expect(q[0]! & 0x0f).toBe(8);
    const back = dequantizeQ4(1, 32, q, s);
    expect(Math.abs(back[0]!)).toBe(0);
    expect(back[31]).toBeCloseTo(31 * 0.05, 6);
  });

  test("round trip error is at most half a step (a whole one where level 16 clips to 15), including a partial last block (padded with level 8, i.e. 0)", () => {
    const n = 3, k = 80; // 3 blocks per row, the last one 16 wide
    const w = randomMatrix(n, k, 3);
    const l = q4Layout(n, k);
    expect(l).toEqual({ blocks: 3, qBytes: 3 * 3 * 16, scaleCount: 9 });
    const q = new Uint8Array(l.qBytes), s = new Float32Array(l.scaleCount);
    quantizeQ4Rows(w, n, k, q, s);
    const back = dequantizeQ4(n, k, q, s);
    for (let r = 0; r < n; r++)
      for (let i = 0; i < k; i++) {
        const d = Math.abs(s[r * 3 + Math.floor(i / 32)]!);
        const clipped = Math.abs(w[r * k + i]!) > 7.5 * d; // only the side opposite m reaches past level 15
        expect(Math.abs(back[r * k + i]! - w[r * k + i]!)).toBeLessThanOrEqual((clipped ? d : d / 2) + 1e-6);
      }
    // The padding of each row's last block: bytes 8..15 of block 2 hold level 8 twice.
    for (let r = 0; r < n; r++) expect(Array.from(q.subarray((r * 3 + 2) * 16 + 8, (r * 3 + 3) * 16))).toEqual(new Array(8).fill(0x88));
  });

  test("gives llama.cpp's Q4_0 levels: the same values as ggml's encoding, up to Q4_0's f16 scale", () => {
    const k = 256;
    const w = randomMatrix(1, k, 21);
    const l = q4Layout(1, k);
    const q = new Uint8Array(l.qBytes), s = new Float32Array(l.scaleCount);
    quantizeQ4Rows(w, 1, k, q, s);
    const ours = dequantizeQ4(1, k, q, s);
    const ggml = decodeTensor(GGML_TYPE.Q4_0, encodeQ4_0(w), k);
    // Same level; only the scale differs, by f16 rounding (relative 2⁻¹¹) times at most 8 steps.
    for (let i = 0; i < k; i++) expect(Math.abs(ours[i]! - ggml[i]!)).toBeLessThanOrEqual(8 * Math.abs(s[i >> 5]!) * 2 ** -11 + 1e-7);
  });

  test("onnxruntime's MatMulNBits (accuracy level 0, no zero points) computes A · dequant(W)ᵀ", async () => {
    const m = 4, n = 5, k = 80;
    const w = randomMatrix(n, k, 11);
    const a = randomMatrix(m, k, 12);
    const l = q4Layout(n, k);
    const q = new Uint8Array(l.qBytes), s = new Float32Array(l.scaleCount);
    quantizeQ4Rows(w, n, k, q, s);
    const g = new GraphBuilder();
    g.input("a", T.FLOAT, [m, k]);
    g.inline("q", T.UINT8, [n, l.blocks, 16], q);
    g.inline("s", T.FLOAT, [l.scaleCount], new Uint8Array(s.buffer));
    g.node("MatMulNBits", ["a", "q", "s"], { K: int(k), N: int(n), bits: int(4), block_size: int(32), accuracy_level: int(0) }, { domain: "com.microsoft", output: "y" });
    g.output("y", T.FLOAT, [m, n]);
    const session = await ort.InferenceSession.create(g.encode("q4-check"));
    const y = (await session.run({ a: new ort.Tensor("float32", a, [m, k]) })).y!.data as Float32Array;
    const deq = dequantizeQ4(n, k, q, s);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let ref = 0;
        for (let t = 0; t < k; t++) ref += a[i * k + t]! * deq[j * k + t]!;
        expect(Math.abs(y[i * n + j]! - ref)).toBeLessThan(1e-4);
      }
  });
});

describe("int8 quantization", () => {
  /** DynamicQuantizeMatMul on A [m, k] and the written int8 weight, through onnxruntime. */
  async function dynamicQuantizeMatMul(a: Float32Array, m: number, k: number, qT: Int8Array, scales: Float32Array, n: number) {
    const g = new GraphBuilder();
    g.input("a", T.FLOAT, [m, k]);
    g.inline("b", T.INT8, [k, n], new Uint8Array(qT.buffer));
    g.inline("s", T.FLOAT, [n], new Uint8Array(scales.buffer));
    g.node("DynamicQuantizeMatMul", ["a", "b", "s"], {}, { domain: "com.microsoft", output: "y" });
    g.output("y", T.FLOAT, [m, n]);
    const session = await ort.InferenceSession.create(g.encode("int8-check"));
    return (await session.run({ a: new ort.Tensor("float32", a, [m, k]) })).y!.data as Float32Array;
  }

  /**
   * The format's error bound for one output: activations are quantized per tensor to u8 over [min(a, 0), max(a, 0)]
   * (step sA, error ≤ sA/2 each) and weights per column (step sW, error ≤ sW/2 each), so
   * |y − a·w| ≤ Σ_t |a_t|·sW/2 + |ŵ_t|·sA/2 + sA·sW/4, plus float32 rounding of the sums.
   */
  function bound(a: Float32Array, i: number, k: number, deqCol: (t: number) => number, sW: number): number {
    let lo = 0, hi = 0;
    for (const v of a) (lo = Math.min(lo, v)), (hi = Math.max(hi, v));
    const sA = (hi - lo) / 255;
    let b = 0, mag = 0;
    for (let t = 0; t < k; t++) {
      const x = Math.abs(a[i * k + t]!), w = Math.abs(deqCol(t));
      b += x * sW / 2 + w * sA / 2 + sA * sW / 4;
      mag += x * w;
    }
    return b + 1e-5 * mag + 1e-6;
  }

  test("per-column symmetric 7-bit scales, transposed layout, within the format's error bound of DynamicQuantizeMatMul", async () => {
    const m = 3, n = 4, k = 64;
    const w = randomMatrix(n, k, 21);
    const a = randomMatrix(m, k, 22);
    const qT = new Int8Array(k * n), scales = new Float32Array(n);
    quantizeInt8Rows(w, n, k, n, 0, qT, scales);
    for (let j = 0; j < n; j++) {
      let amax = 0;
      for (let t = 0; t < k; t++) amax = Math.max(amax, Math.abs(w[j * k + t]!));
      expect(scales[j]).toBeCloseTo(amax / INT8_MAX_LEVEL, 7);
      for (let t = 0; t < k; t++) expect(Math.abs(qT[t * n + j]! * scales[j]! - w[j * k + t]!)).toBeLessThanOrEqual(scales[j]! / 2 + 1e-7);
    }
    const y = await dynamicQuantizeMatMul(a, m, k, qT, scales, n);
    const wt = transpose(w, n, k);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let ref = 0;
        for (let t = 0; t < k; t++) ref += a[i * k + t]! * wt[t * n + j]!;
        expect(Math.abs(y[i * n + j]! - ref)).toBeLessThanOrEqual(bound(a, i, k, (t) => qT[t * n + j]! * scales[j]!, scales[j]!));
      }
  });

  test("no int16 saturation on any CPU: the worst case for u8×s8 pair sums stays exact", async () => {
    // Activations at the top of the u8 range and weights at ±max level in adjacent pairs: on CPUs without VNNI,
    // ONNX Runtime adds each pair of u8·s8 products in int16, which 8-bit weights (2·255·127) overflow.
    const m = 2, n = 3, k = 128;
    const a = Float32Array.from({ length: m * k }, (_, i) => (i % 7 === 0 ? -0.01 : 1));
    const w = Float32Array.from({ length: n * k }, (_, i) => [1, -1, (i >> 1) % 2 ? 1 : -1][Math.floor(i / k)]!);
    const qT = new Int8Array(k * n), scales = new Float32Array(n);
    quantizeInt8Rows(w, n, k, n, 0, qT, scales);
    for (const q of qT) expect(Math.abs(q)).toBeLessThanOrEqual(INT8_MAX_LEVEL);
    const y = await dynamicQuantizeMatMul(a, m, k, qT, scales, n);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let ref = 0;
        for (let t = 0; t < k; t++) ref += a[i * k + t]! * w[j * k + t]!;
        expect(Math.abs(y[i * n + j]! - ref)).toBeLessThanOrEqual(bound(a, i, k, (t) => qT[t * n + j]! * scales[j]!, scales[j]!));
      }
  });

  test("levels never leave ±INT8_MAX_LEVEL, whatever the row holds", () => {
    const k = 33;
    const rows = [
      Float32Array.from({ length: k }, (_, i) => (i === 5 ? 1e6 : 1e-6)),
      Float32Array.from({ length: k }, (_, i) => (i % 2 ? -3.5 : 3.5)),
      new Float32Array(k),
      Float32Array.from({ length: k }, () => -1e-30),
    ];
    for (const w of rows) {
      const qT = new Int8Array(k), s = new Float32Array(1);
      quantizeInt8Rows(w, 1, k, 1, 0, qT, s);
      expect(Math.max(...Array.from(qT, Math.abs))).toBeLessThanOrEqual(INT8_MAX_LEVEL);
      expect(s[0]).toBeGreaterThan(0);
    }
    expect(INT8_MAX_LEVEL * 255 * 2).toBeLessThanOrEqual(32767);
  });

  test("transpose", () => {
    expect(Array.from(transpose(Float32Array.from([1, 2, 3, 4, 5, 6]), 2, 3))).toEqual([1, 4, 2, 5, 3, 6]);
  });
});
