// Quantized graphs of the tiny model: q4 (MatMulNBits) and int8 load, and their logits track the fp32 graph's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutoModelForCausalLM, AutoTokenizer, env } from "@huggingface/transformers";
import { buildModel, PRESETS } from "../../../src/modelgen/index.ts";
import { correlation, forward, openDriver, positionCorrelations } from "./ort-driver.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-build-quant-"));
const dir = join(root, "kiln-tiny-q-v1");
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(async () => {
  await buildModel({ spec: { ...PRESETS.tiny!, id: "kiln-tiny-q-v1" }, dtypes: ["q4", "fp32", "int8"], outDir: dir });
});

/*
 * Why these thresholds hold on every CPU: with 7-bit weights no kernel saturates, so each quantized matmul adds only
 * its format's rounding noise. int8: weight step amax/63 ≈ 4σ/63 gives a noise-to-signal variance of (4/63)²/12 ≈ 3e-4
 * per matmul, plus 8-bit activation rounding of the same order; about a dozen matmuls in series on the tiny model give
 * NSR ≈ 5e-3, correlation 1/√(1 + NSR) ≈ 0.997. The 0.99 bound allows NSR 0.02, four times that. q4 (15 levels a
 * block) has ~18× int8's step², so only a loose 0.9 is promised for it.
 */
const seq = [5, 300, 41, 1200, 77, 9, 640, 18, 1999, 3];

describe("quantized tiny model", () => {
  test("q4 and int8 logits correlate with fp32 (loose tolerance)", async () => {
    const mask = [seq.map(() => 1)];
    const ref = await forward(await openDriver(dir), [seq], mask, null, 0);
    const q4 = await forward(await openDriver(dir, "model_q4.onnx"), [seq], mask, null, 0);
    const int8 = await forward(await openDriver(dir, "model_int8.onnx"), [seq], mask, null, 0);
    expect(q4.dims).toEqual(ref.dims);
    expect(correlation(ref.logits, q4.logits)).toBeGreaterThan(0.9);
    expect(correlation(ref.logits, int8.logits)).toBeGreaterThan(0.99);
    // Every position's next-token distribution, not just the whole tensor: the worst one stays close too.
    expect(Math.min(...positionCorrelations(ref.logits, int8.logits, ref.dims[2]!))).toBeGreaterThan(0.99);
    // Not identical: the quantized weights really are used.
    expect(correlation(ref.logits, q4.logits)).toBeLessThan(0.99999);
  });

  test("a tied-embedding Qwen2 shape quantizes its head from the embedding rows", async () => {
    const qdir = join(root, "qwen2");
    await buildModel({ spec: TINY_QWEN2, dtypes: ["fp32", "q4", "int8"], outDir: qdir });
    const s = [5, 300, 41, 1000, 77, 9];
    const mask = [s.map(() => 1)];
    const ref = await forward(await openDriver(qdir), [s], mask, null, 0);
    const q4 = await forward(await openDriver(qdir, "model_q4.onnx"), [s], mask, null, 0);
    const int8 = await forward(await openDriver(qdir, "model_int8.onnx"), [s], mask, null, 0);
    expect(correlation(ref.logits, q4.logits)).toBeGreaterThan(0.9);
    expect(correlation(ref.logits, int8.logits)).toBeGreaterThan(0.99);
  });

  test("transformers.js loads the default dtype (q4, first listed) and generates", async () => {
    env.allowRemoteModels = false;
    env.localModelPath = root;
    const cfg = await Bun.file(join(dir, "config.json")).json();
    expect(cfg["transformers.js_config"]).toEqual({ dtype: "q4" });
    const tok = await AutoTokenizer.from_pretrained("kiln-tiny-q-v1", { local_files_only: true });
    const model = await AutoModelForCausalLM.from_pretrained("kiln-tiny-q-v1", { local_files_only: true });
    const inputs = tok("Hello there");
    const out = (await model.generate({ ...inputs, max_new_tokens: 5, min_new_tokens: 5, do_sample: false })) as { dims: number[] };
    expect(out.dims).toEqual([1, (inputs.input_ids.dims as number[])[1]! + 5]);
  });
});
