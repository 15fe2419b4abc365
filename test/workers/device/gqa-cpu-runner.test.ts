// An operator's GroupQueryAttention export on the CPU (transformers.js's layout of onnx-community's model_q4.onnx: q4
// MatMulNBits, fp32 activations, attention_mask; and a q4f16 one, fp16 throughout) driven right-padded by the device
// runner: its logits track kiln's fp32
// graph of the same weights within q4's bound, and greedy batched equals greedy solo through the engine (staggered
// joins, a cancel, cache growth), the batch holding 4 rows, with nothing left behind once the engine is idle; the prefix
// cache serves it from positions read back to the host, not cut to pass bounds (no pass alignment on the CPU).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { graphUsesGroupQueryAttention } from "../../../src/models/graph-attention.ts";
import { buildModel, PRESETS } from "../../../src/modelgen/index.ts";
import { Q4_CORRELATION } from "../../../src/modelgen/gpu-bounds.ts";
import { decodeInputs, prefillInputs } from "../../../workers/text/batch-inputs.ts";
import { CPU_PASS_TOKENS, type DeviceRunner } from "../../../workers/text/device/device-runner.ts";
import { loadGqaCpuModel } from "../../../workers/text/device/load-gqa-cpu.ts";
import { loadModel } from "../../../workers/text/load-model.ts";
import type { ModelRunner } from "../../../workers/text/model-runner.ts";
import { PrefixCache } from "../../../workers/text/prefix-cache.ts";
import { PrefixReuse } from "../../../workers/text/prefix-reuse.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { correlation } from "../../unit/modelgen/ort-driver.ts";
import { engineHarness } from "../../unit/workers/engine-harness.ts";
import { expectBatchedEqualsSolo } from "./batched-solo.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-gqa-cpu-"));
const dir = join(root, "operator-tiny-v1");
const spec = { ...PRESETS.tiny!, id: "operator-tiny-v1" };
const loaded: { dispose(): Promise<void> }[] = [];
let cpu: ModelRunner;
let gqa: DeviceRunner;
/** The folder's q4f16 graph (fp16 activations and cache, a GPU export) on the CPU: its cache holds float16 words. */
let gqaHalf: DeviceRunner;

beforeAll(async () => {
  await buildModel({ spec, dtypes: ["fp32", "q4", "q4f16"], outDir: dir, gpuLengths: "attention_mask", gqaQ4: true });
  const c = await loadModel({ id: spec.id, dir, dtype: "fp32", threads: 1, maxBatch: 16 });
  loaded.push(c);
  cpu = c.runner;
  const g = await loadGqaCpuModel({ id: spec.id, dir, dtype: "q4", threads: 1, maxBatch: 16, rows: "right-padded" });
  loaded.push(g);
  gqa = g.runner;
  const h = await loadGqaCpuModel({ id: spec.id, dir, dtype: "q4f16", threads: 1, maxBatch: 16, rows: "right-padded" });
  loaded.push(h);
  gqaHalf = h.runner;
}, 300_000);

afterAll(async () => {
  for (const m of loaded) await m.dispose();
  rmSync(root, { recursive: true, force: true });
});

const argmax = (x: Float32Array) => x.reduce((best, v, i) => (v > x[best]! ? i : best), 0);

describe("an operator's GroupQueryAttention export on the CPU", () => {
  test("the folder's q4 graph is a GroupQueryAttention one, its fp32 graph kiln's own", () => {
    expect(graphUsesGroupQueryAttention(join(dir, "onnx", "model_q4.onnx"))).toBe(true);
    expect(graphUsesGroupQueryAttention(join(dir, "onnx", "model.onnx"))).toBe(false);
  });

  test.each([["q4", () => gqa], ["q4f16", () => gqaHalf]] as const)("its %s logits track kiln's fp32 graph of the same weights within q4's bound, over a prompt longer than one pass", async (_, runner) => {
    const gqa = runner();
    let worst = 1;
    for (const length of [8, 40, CPU_PASS_TOKENS + 20]) {
      const prompt = Array.from({ length }, (_, j) => (j * 13 + length) % 500);
      let a = await gqa.forward(prefillInputs([prompt], 0), null);
      let b = await cpu.forward(prefillInputs([prompt], 0), null);
      let len = length;
      for (let step = 0; step < 6; step++) {
        worst = Math.min(worst, correlation(a.logits, b.logits));
        const token = argmax(b.logits);
        a = await gqa.forward(decodeInputs([token], [len], len), { tensors: a.present, lens: [len], length: len });
        b = await cpu.forward(decodeInputs([token], [len], len), { tensors: b.present, lens: [len], length: len });
        len++;
      }
      gqa.cache.sweep([]);
    }
    expect(worst).toBeGreaterThan(Q4_CORRELATION);
  }, 120_000);

  test("greedy batched equals greedy solo through the engine: staggered joins, leaves, a cancel and cache growth", async () => {
    await expectBatchedEqualsSolo(gqa);
  }, 240_000);

  test("so in fp16: the cache's float16 outputs go back to ONNX Runtime as their 16-bit words", async () => {
    await expectBatchedEqualsSolo(gqaHalf);
  }, 240_000);

  test("the prefix cache: repeats read the shared positions back from the host and decode as a fresh prefill does", async () => {
    const TEAM = { scope: "team", publicTokens: 0 };
    const shared = Array.from({ length: 40 }, (_, i) => (i * 29 + 7) % 1500);
    const reuse = new PrefixReuse(new PrefixCache(16, 64 * 1024 * 1024), `${spec.id}\0q4\0cpu`, (kv, row, from, n) => gqa.readColumns(kv as never, row, from, n), gqa.passAlign);
    expect(gqa.passAlign).toBeUndefined();
    const h = engineHarness(gqa, { maxBatch: 4, budget: 64, prefix: reuse });
    h.engine.add("a", [...shared, 11, 12], greedyParams(12), undefined, TEAM);
    await h.run("a");
    const prompts: Record<string, number[]> = { b: [...shared, 13], c: [...shared, 14, 15, 16] };
    for (const [id, prompt] of Object.entries(prompts)) h.engine.add(id, prompt, greedyParams(12), undefined, TEAM);
    await h.run("b", "c");
    // All 40 shared positions (on the device a hit is cut to its 31-token passes).
    expect([h.finish("b")?.cachedTokens, h.finish("c")?.cachedTokens]).toEqual([40, 40]);
    for (const [id, prompt] of Object.entries(prompts)) {
      const solo = engineHarness(gqa, { maxBatch: 1, budget: 64 });
      solo.engine.add(id, prompt, greedyParams(12));
      await solo.run(id);
      expect([id, h.tokens(id)]).toEqual([id, solo.tokens(id)]);
    }
    expect(gqa.cache.liveCount).toBe(0);
  }, 120_000);
});
