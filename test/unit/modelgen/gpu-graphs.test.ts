// The WebGPU formats (fp16, q4f16) on ONNX Runtime's webgpu EP: they track the fp32/q4 CPU graphs, stay on the GPU, and batch right-padded rows exactly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildModel, PRESETS, type ModelSpec } from "../../../src/modelgen/index.ts";
import { fromFloat16 } from "../../../src/modelgen/float16.ts";
import { fp16Correlation, Q4_CORRELATION, q4f16VsQ4Correlation } from "../../../src/modelgen/gpu-bounds.ts";
import { nodePlacement, nodesOffDevice, WEBGPU_PROVIDER } from "../../../src/modelgen/node-placement.ts";
import { f16Tensor, type GpuDriver, gpuStep, gpuTeacherForced, halfBits, openGpuDriver, range, type Cache, type Ep } from "./gpu-driver.ts";
import { argmax, correlation, forward, maxAbsDiff, openDriver, type Past } from "./ort-driver.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-build-gpu-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const MODELS: Record<string, ModelSpec> = { tiny: PRESETS.tiny!, qwen2: TINY_QWEN2 };
const dirOf = (m: string) => join(root, m);
beforeAll(async () => {
  for (const [m, spec] of Object.entries(MODELS)) await buildModel({ spec, dtypes: ["fp32", "q4", "fp16", "q4f16"], outDir: dirOf(m) });
  await buildModel({ spec: PRESETS.tiny!, dtypes: ["fp32", "q4"], outDir: join(root, "cpu-only") });
});

/*
 * Bounds, as src/modelgen/gpu-bounds.ts derives them: fp16 vs fp32 (tiny: 0.9975; measured 0.99998), q4f16 vs fp32 held
 * to q4's 0.9 on these small models, and q4f16 vs the q4 CPU graph (the same 4-bit levels: tiny 0.996; measured 0.9997).
 */

const TOKENS = Array.from({ length: 32 }, (_, i) => (i * 7919 + 13) % 960);
const PREFILL = 8;

/** The same teacher-forced schedule on a CPU-format graph (attention_mask, position_ids, num_logits_to_keep = 1). */
async function cpuTeacherForced(dir: string, file: string): Promise<Float32Array[]> {
  const d = await openDriver(dir, file);
  const out: Float32Array[] = [];
  const mask = [TOKENS.slice(0, PREFILL).map(() => 1)];
  let r = await forward(d, [TOKENS.slice(0, PREFILL)], mask, null, 1);
  out.push(r.logits.slice());
  for (let p = PREFILL; p < TOKENS.length; p++) {
    mask[0]!.push(1);
    r = await forward(d, [[TOKENS[p]!]], mask, r.past as Past, 1);
    out.push(r.logits.slice());
  }
  return out;
}

interface Agreement {
  minCorr: number;
  maxAbs: number;
  /** Steps whose argmax differs although the reference's top-two gap exceeds twice the largest difference seen. */
  clearFlips: number;
  agree: number;
}

function compare(ref: Float32Array[], got: Float32Array[], vocab: number): Agreement {
  expect(got.length).toBe(ref.length);
  const maxAbs = Math.max(...ref.map((r, i) => maxAbsDiff(r, got[i]!)));
  let agree = 0, clearFlips = 0;
  ref.forEach((r, i) => {
    const top = argmax(r, 0, vocab);
    if (top === argmax(got[i]!, 0, vocab)) return agree++;
    const second = Math.max(...Array.from(r).filter((_, j) => j !== top));
    if (r[top]! - second > 2 * maxAbs) clearFlips++;
  });
  return { minCorr: Math.min(...ref.map((r, i) => correlation(r, got[i]!))), maxAbs, clearFlips, agree };
}

describe("GPU formats: fp16 and q4f16", () => {
  test("the CPU formats' files are byte-identical with or without the GPU formats beside them", () => {
    const sha = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");
    for (const f of ["model.onnx", "model.onnx_data", "model_q4.onnx", "model_q4.onnx_data"]) {
      expect(sha(join(dirOf("tiny"), "onnx", f))).toBe(sha(join(root, "cpu-only", "onnx", f)));
    }
    expect(readdirSync(join(dirOf("tiny"), "onnx")).filter((f) => /_(fp16|q4f16)\.onnx$/.test(f)).sort()).toEqual(["model_fp16.onnx", "model_q4f16.onnx"]);
  });

  test("the graphs' inputs and outputs are the device runner's contract", async () => {
    const d = await openGpuDriver(dirOf("tiny"), "model_fp16.onnx", "cpu");
    const pasts = range(0, 4).flatMap((l) => [`past_key_values.${l}.key`, `past_key_values.${l}.value`]);
    expect([...d.session.inputNames]).toEqual(["input_ids", "position_ids", "seqlens_k", "total_sequence_length", ...pasts]);
    expect([...d.session.outputNames]).toEqual(["logits", ...pasts.map((n) => n.replace("past_key_values", "present"))]);
    const r = await gpuStep(d, { ids: [[1, 2, 3]], positions: [[0, 1, 2]], seqlensK: [2], total: 3, past: null });
    expect(r.dims).toEqual([1, 1, 2048]);
    expect(r.present["past_key_values.0.key"]!.dims).toEqual([1, 2, 3, 32]);
    expect(r.present["past_key_values.0.key"]!.type).toBe("float16");
  });

  for (const m of Object.keys(MODELS)) {
    for (const ep of ["webgpu", "cpu"] as Ep[]) {
      test(`${m}: a 32-token teacher-forced run on the ${ep} EP tracks fp32 (fp16) and q4 (q4f16)`, async () => {
        const dir = dirOf(m), vocab = MODELS[m]!.vocab;
        const fp32 = await cpuTeacherForced(dir, "model.onnx");
        const q4 = await cpuTeacherForced(dir, "model_q4.onnx");
        const fp16 = compare(fp32, await gpuTeacherForced(await openGpuDriver(dir, "model_fp16.onnx", ep), TOKENS, PREFILL), vocab);
        const q4f16Out = await gpuTeacherForced(await openGpuDriver(dir, "model_q4f16.onnx", ep), TOKENS, PREFILL);
        const q4f16 = compare(fp32, q4f16Out, vocab);
        const q4f16VsQ4 = compare(q4, q4f16Out, vocab);
        console.log(`${m} ${ep}: fp16 vs fp32 ${JSON.stringify(fp16)}; q4f16 vs fp32 ${JSON.stringify(q4f16)}; q4f16 vs q4 ${JSON.stringify(q4f16VsQ4)}`);
        expect(fp16.minCorr).toBeGreaterThan(fp16Correlation(MODELS[m]!));
        expect(fp16.agree).toBe(fp32.length);
        expect(q4f16.minCorr).toBeGreaterThan(Q4_CORRELATION);
        expect(q4f16VsQ4.minCorr).toBeGreaterThan(q4f16VsQ4Correlation(MODELS[m]!));
        // int8 activation rounding differs between the two kernels, so a near-tie may flip; a clear winner may not.
        expect(q4f16VsQ4.clearFlips).toBe(0);
        // Not the fp32 weights: the 4-bit ones are really used.
        expect(q4f16.minCorr).toBeLessThan(0.9999);
      });
    }
  }

  for (const file of ["model_fp16.onnx", "model_q4f16.onnx"]) {
    test(`${file}: every MatMul(NBits), attention, rotary and norm node runs on the WebGPU EP`, async () => {
      const prefix = join(root, `profile-${file}`);
      const d = await openGpuDriver(dirOf("qwen2"), file, "webgpu", { enableProfiling: true, profileFilePrefix: prefix });
      await gpuStep(d, { ids: [[5, 6, 7]], positions: [[0, 1, 2]], seqlensK: [2], total: 3, past: null });
      d.session.endProfiling();
      const profile = readdirSync(root).filter((f) => f.startsWith(`profile-${file}`) && f.endsWith(".json"));
      expect(profile.length).toBe(1);
      const p = nodePlacement(readFileSync(join(root, profile[0]!), "utf8"));
      expect(nodesOffDevice(p)).toEqual([]);
      // The check is not vacuous: each layer's nodes (3 layers) and the head were seen, on the GPU.
      const L = TINY_QWEN2.layers, on = (op: string) => p.byOp[op]?.[WEBGPU_PROVIDER];
      expect(on(file === "model_fp16.onnx" ? "MatMul" : "MatMulNBits")).toBe(4 * L + 1);
      expect([on("GroupQueryAttention"), on("RotaryEmbedding"), on("SkipSimplifiedLayerNormalization"), on("SimplifiedLayerNormalization")]).toEqual([L, 2 * L, 2 * L, 1]);
      const elsewhere = p.nodes.filter((n) => n.provider !== WEBGPU_PROVIDER);
      console.log(`${file}: ${p.nodes.length} nodes, off the GPU: ${elsewhere.map((n) => n.op).join(", ") || "none"}`);
    });
  }

  // Spare capacity after every row; then the longest row first, filling the buffer exactly on the second step.
  const layouts = [{ lens: [5, 11, 8], CAP: 20 }, { lens: [11, 5, 8], CAP: 13 }];
  for (const file of ["model_fp16.onnx", "model_q4f16.onnx"]) {
    test(`${file}: three rows of different lengths decode in one pass as each does alone`, async () => {
      const d = await openGpuDriver(dirOf("tiny"), file, "webgpu");
      for (const { lens, CAP } of layouts) await batchedAgainstSolo(d, lens, CAP);
    });
  }
});

async function batchedAgainstSolo(d: GpuDriver, lens: number[], CAP: number): Promise<void> {
    const V = d.vocab, KV = d.kvHeads, D = d.headDim;
    const prompts = lens.map((n, r) => range(0, n).map((i) => (i * 131 + r * 977 + 7) % 2000));
    const next = [[17, 400], [1800, 3], [999, 1234]];
    const solo: Float32Array[][] = [], soloCache: Cache[] = [], soloAfter: Cache[] = [];
    for (let r = 0; r < 3; r++) {
      const n = lens[r]!;
      let s = await gpuStep(d, { ids: [prompts[r]!], positions: [range(0, n)], seqlensK: [n - 1], total: n, past: null });
      soloCache.push(s.present);
      solo.push([]);
      for (let k = 0; k < 2; k++) {
        s = await gpuStep(d, { ids: [[next[r]![k]!]], positions: [[n + k]], seqlensK: [n + k], total: n + k + 1, past: s.present });
        solo[r]!.push(s.logits.slice());
      }
      soloAfter.push(s.present);
    }
    // A right-padded capacity buffer: row r's cache in columns [0, n_r); the spare columns hold 3.0, which must be ignored.
    const GARBAGE = 0x4200;
    const past: Cache = {};
    for (const name of Object.keys(soloCache[0]!)) {
      const buf = new Uint16Array(3 * KV * CAP * D).fill(GARBAGE);
      for (let r = 0; r < 3; r++) {
        const src = halfBits(soloCache[r]![name]!), n = lens[r]!;
        for (let h = 0; h < KV; h++) buf.set(src.subarray(h * n * D, (h + 1) * n * D), (r * KV + h) * CAP * D);
      }
      past[name] = f16Tensor(buf, [3, KV, CAP, D]);
    }
    let cache = past;
    for (let k = 0; k < 2; k++) {
      const s = await gpuStep(d, {
        ids: next.map((t) => [t[k]!]), positions: lens.map((n) => [n + k]), seqlensK: lens.map((n) => n + k), total: Math.max(...lens) + k + 1, past: cache,
      });
      expect(s.dims).toEqual([3, 1, V]);
      cache = s.present;
      expect(cache["past_key_values.0.key"]!.dims).toEqual([3, KV, CAP, D]);
      for (let r = 0; r < 3; r++) {
        const got = s.logits.subarray(r * V, (r + 1) * V), want = solo[r]![k]!;
        // Same graph, same kernels: only the order of a kernel's sums may differ with the batch. Allow each logit
        // four fp16 rounding steps at the largest logit's scale (4·2u·max|logit|); measured: bit-identical.
        const tol = 8 * 2 ** -11 * Math.max(...Array.from(want, Math.abs));
        expect(maxAbsDiff(got, want)).toBeLessThanOrEqual(tol);
        expect(argmax(got, 0, V)).toBe(argmax(want, 0, V));
      }
    }
    // The present buffer keeps its capacity, and each row's cache and its two new keys sit at the row's own columns.
    // Nothing is promised past them: measured, the kernel zeroes those columns and may write another row's newest
    // key there (row 0 of [5, 11, 8] held rows 1 and 2's at its columns 7 and 8), so a runner treats them as garbage.
    for (let r = 0; r < 3; r++) {
      const got = halfBits(cache["past_key_values.3.key"]!), want = halfBits(soloAfter[r]!["past_key_values.3.key"]!), n = lens[r]! + 2;
      for (let h = 0; h < KV; h++) {
        const row = got.subarray((r * KV + h) * CAP * D, (r * KV + h + 1) * CAP * D);
        const a = fromFloat16(row.subarray(0, n * D)), b = fromFloat16(want.subarray(h * n * D, (h + 1) * n * D));
        expect(maxAbsDiff(a, b)).toBeLessThanOrEqual(2 * 2 ** -11 * Math.max(...Array.from(b, Math.abs)));
      }
    }
}
