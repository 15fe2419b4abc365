// Every GGUF format kiln writes, loaded by llama.cpp (node-llama-cpp's prebuilt CPU binary), gives next-token logits
// that track kiln's fp32 ONNX graph within what that format's rounding allows; the K-quants on rows of 256, where
// llama.cpp's mixes apply, and on the tiny preset's rows of 128 and 384, where they fall back to 32-element types.
import { beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Llama } from "node-llama-cpp";
import { buildModel, PRESETS, type ModelSpec } from "../../../src/modelgen/index.ts";
import { decodeTensor, encodeTensor, GGML_TYPE, ggmlTypeName, type GgmlType } from "../../../src/modelgen/gguf-blocks.ts";
import { GgufWriter, type GgufKv } from "../../../src/modelgen/gguf-file.ts";
import { installGguf } from "../../../src/modelgen/gguf-install.ts";
import { GGUF_FORMATS, ggufMetadata, ggufTensorPlan, type GgufFormat } from "../../../src/modelgen/gguf-model.ts";
import { llamaLogits } from "../../load/llama-cpp-accuracy.ts";
import { llamaCppFixture } from "../../helpers/llama-cpp-fixture.ts";
import { requiredCorrelation, weightError } from "./gguf-accuracy.ts";
import { readGguf } from "./gguf-whole.ts";
import { forward, openDriver, positionCorrelations } from "./ort-driver.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

let llama: Llama;
const root = llamaCppFixture("kiln-gguf-formats-", (l) => (llama = l));

/**
 * Rows of 256 in every matrix (hidden, heads × headDim, intermediate); 2 layers, so Q4_K_M's Q6_K layer (1) shows. The
 * init std shrinks by √(128/256) from the tiny preset's, so each matmul keeps the gain the correlation bound assumes.
 */
const K_LLAMA: ModelSpec = { ...PRESETS.tiny!, id: "kiln-k-llama-gguf", layers: 2, hidden: 256, heads: 4, kvHeads: 2, headDim: 64, intermediate: 512, initStd: PRESETS.tiny!.initStd * Math.sqrt(128 / 256) };
/** Tied head (token_embd takes the head's type) and 4 query heads per KV head (Q2_K's attn_v goes to Q4_K); std as above. */
const K_QWEN2: ModelSpec = { ...TINY_QWEN2, id: "kiln-k-qwen2-gguf", layers: 3, hidden: 256, heads: 4, kvHeads: 1, headDim: 64, intermediate: 512, initStd: TINY_QWEN2.initStd * Math.sqrt(96 / 256) };
const ALL = GGUF_FORMATS.filter((f) => f !== "f32");
/** On the tiny preset only the K mixes differ from the rows-of-256 runs: every K-quant falls back to a 32-element type. */
const FALLBACKS: GgufFormat[] = ["q2_k", "q3_k_m", "q4_k_s", "q4_k_m", "q5_k_m", "q6_k"];
/**
 * Each spec with the formats it runs, and ggml types no kiln format writes but real GGUFs carry, run as files with
 * every matrix in that one type: IQ4_NL, where older llama.cpp quantizers fell back from Q2_K/Q3_K.
 */
const SPECS: [string, ModelSpec, GgufFormat[], number[]][] = [
  ["llama, rows of 256", K_LLAMA, ALL, []],
  ["qwen2 (tied, biases, GQA 4), rows of 256", K_QWEN2, ALL, []],
  ["llama tiny preset (K-quants fall back)", { ...PRESETS.tiny!, id: "kiln-tiny-formats-gguf" }, FALLBACKS, [GGML_TYPE.IQ4_NL]],
];
const TOKENS = [5, 300, 41, 1000, 77, 9, 640, 18, 999, 3, 512, 250];
const UNQUANTIZED = new Set<GgufFormat>(["f32", "f16", "bf16"]);

/**
 * A copy of the GGUF file at `from` with every matrix re-encoded as `type` (1-D tensors stay F32), from the values
 * decodeTensor reads: with F32, exactly those values (kiln's import path).
 */
function writeCopy(spec: ModelSpec, metadata: GgufKv[], from: string, to: string, type: number): void {
  const file = readGguf(from);
  const plan = ggufTensorPlan(spec, "f32").map((t) => (t.dims.length > 1 ? { ...t, type: type as GgmlType } : t));
  const writer = new GgufWriter(to, metadata, plan);
  file.tensors.forEach((t, i) => {
    const n = t.dims.reduce((a, d) => a * d, 1);
    writer.append(t.name, encodeTensor(plan[i]!.type, decodeTensor(t.type, file.bytes.subarray(t.at), n)));
  });
  writer.close();
}

async function logitsOf(path: string, vocab: number): Promise<Float32Array> {
  const model = await llama.loadModel({ modelPath: path });
  try {
    return await llamaLogits(model, TOKENS, vocab, { threads: 1, f32Cache: true });
  } finally {
    await model.dispose();
  }
}

describe.each(SPECS)("every format through llama.cpp vs kiln's fp32 ONNX: %s", (_label, spec, formats, types) => {
  const paths = {} as Record<GgufFormat, string>;
  let ref: Float32Array;
  let eps8 = 0;
  let f32Metadata: GgufKv[];
  beforeAll(async () => {
    const dir = join(root, spec.id);
    await buildModel({ spec, dtypes: ["fp32"], outDir: dir });
    const d = await openDriver(dir);
    ref = (await forward(d, [TOKENS], [TOKENS.map(() => 1)], null, 0)).logits;
    await d.session.release();
    for (const f of ["f32", "q8_0", ...formats] as const) paths[f] = (await installGguf(join(root, "gguf"), spec, f)).path;
    eps8 = weightError(paths.f32, paths.q8_0).eps;
    f32Metadata = ggufMetadata(spec, "f32");
  });

  /**
   * The file at `path` tracks the ONNX logits within its rounding's bound, and llama.cpp computes with the very values
   * decodeTensor reads: the same weights decoded into an F32 file give the same logits, up to llama.cpp's 8-bit
   * rounding of the activations (the only rounding left between the two).
   */
  async function check(label: string, path: string, quantized: boolean): Promise<void> {
    const { eps, bound } = weightError(paths.f32, path);
    expect(eps).toBeLessThanOrEqual(bound);
    const got = await logitsOf(path, spec.vocab);
    const need = requiredCorrelation(spec, eps, eps8);
    const min = Math.min(...positionCorrelations(ref, got, spec.vocab));
    console.log(`${spec.id} ${label}: weight error ${eps.toFixed(4)} (bound ${bound.toFixed(4)}), min r ${min.toFixed(4)} (need ${need.toFixed(4)})`);
    expect(min).toBeGreaterThan(label === "q8_0" ? Math.max(0.99, need) : need);
    if (quantized) expect(min).toBeLessThan(0.999999); // the quantized weights really are used

    const copy = join(root, `${spec.id}-${label}-decoded.gguf`);
    writeCopy(spec, f32Metadata, path, copy, GGML_TYPE.F32);
    const same = Math.min(...positionCorrelations(await logitsOf(copy, spec.vocab), got, spec.vocab));
    console.log(`${spec.id} ${label}: decoded copy, min r ${same.toFixed(6)} (need ${requiredCorrelation(spec, 0, eps8).toFixed(6)})`);
    expect(same).toBeGreaterThan(requiredCorrelation(spec, 0, eps8));
    rmSync(copy);
  }

  test.each(formats)("%s", async (format) => {
    // The file holds the types the mix plans (so the K-quant types really are in it where rows allow).
    expect(readGguf(paths[format]).tensors.map((t) => t.type)).toEqual(ggufTensorPlan(spec, format).map((t) => t.type));
    await check(format, paths[format], !UNQUANTIZED.has(format));
  });

  if (types.length)
    test.each(types.map((t) => [ggmlTypeName(t), t] as const))("every matrix as %s", async (name, type) => {
      const path = join(root, `${spec.id}-all-${name}.gguf`);
      writeCopy(spec, f32Metadata, paths.f32, path, type);
      await check(name, path, true);
    });
});
