// GGUF files of every architecture and tensor type, imported into kiln's graphs, give llama.cpp's own logits on the same
// file: kiln decodes each block to exactly the values llama.cpp multiplies by, so what is left is llama.cpp's rounding
// of the activations (8-bit blocks on the CPU), bounded from its format, never from what one CPU gave.
import { describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Llama } from "node-llama-cpp";
import { writeGgufModel, type GgufFormat } from "../../../../src/modelgen/gguf-model.ts";
import { importModel } from "../../../../src/modelgen/import/import-model.ts";
import type { Architecture, ModelSpec } from "../../../../src/modelgen/spec.ts";
import { generateWeight, type Chunk, type PlanEntry } from "../../../../src/modelgen/weights.ts";
import { tensorRng } from "../../../../src/modelgen/rng.ts";
import { llamaLogits, onnxLogits } from "../../../load/llama-cpp-accuracy.ts";
import { llamaCppFixture } from "../../../helpers/llama-cpp-fixture.ts";
import { argmax, positionCorrelations } from "../ort-driver.ts";

let llama: Llama;
const root = llamaCppFixture("kiln-import-gguf-", (l) => (llama = l));

/** Rows of 256 so every K-quant applies to every matrix (llama.cpp falls back to other types for shorter rows). */
const spec = (architecture: Architecture): ModelSpec => ({
  id: `gguf-${architecture}-v1`,
  // Not the family's name: llama.cpp looks up Phi-3's own special tokens in a file whose general.name says Phi.
  displayName: "GGUF import test",
  architecture,
  layers: 2,
  hidden: 256,
  heads: 4,
  kvHeads: 2,
  headDim: 64,
  intermediate: 512,
  vocab: 2048,
  contextLength: 4096,
  // Llama and Phi-3 checkpoints carry their own head; Qwen's small models tie it to the embedding.
  tiedEmbeddings: architecture === "qwen2" || architecture === "qwen3",
  ropeTheta: 10000,
  rmsEps: 1e-6,
  seed: 11,
  initStd: 0.05,
  embedStd: 0.5,
});

/** The seeded weights, with norms that are not all ones (so a misplaced or dropped norm shows in the logits). */
function variedNorms(s: ModelSpec) {
  return function* (_spec: ModelSpec, e: PlanEntry): Generator<Chunk> {
    if (e.kind !== "norm") return yield* generateWeight(s, e);
    const data = new Float32Array(e.cols);
    tensorRng(s.seed, `${e.name}/varied`).fillNormal(data, 0.2);
    for (let i = 0; i < data.length; i++) data[i]! += 1;
    yield { data, rowStart: 0, rows: 1 };
  };
}

const TOKENS = Array.from({ length: 32 }, (_, i) => (i * 397 + 11) % 2000 + 20);

/**
 * The correlation llama.cpp must reach against kiln's fp32 graph on the same decoded weights. Every matmul rounds its
 * activations to 8-bit blocks (Q8_0 for 32-blocks, Q8_K for K-quants' 256-blocks: half a step of max|x|/127 per value,
 * and max|x| ≤ √n · the block's RMS, so a relative RMS of at most √256/254) or to f16 / bf16 for float weights
 * (2^-11 and 2^-8 relative). M matmuls of independent noise give ρ = √M · ε of the logits' spread, doubled for the
 * norms' and softmax's amplification: r ≥ 1/√(1 + ρ²).
 */
function required(s: ModelSpec, format: GgufFormat): number {
  // F32: both sides multiply the same float32 weights, so only summation order differs.
  if (format === "f32") return 0.9999;
  const eps = format === "f16" ? 2 ** -11 : format === "bf16" ? 2 ** -8 : Math.sqrt(256) / 254;
  const rho = 2 * Math.sqrt((s.layers * 7 + 1) * eps * eps);
  return 1 / Math.sqrt(1 + rho * rho);
}

const FORMATS: GgufFormat[] = ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k"];

/** Imports `file` and returns kiln's fp32 logits and llama.cpp's over TOKENS, with their per-position correlations. */
async function compare(s: ModelSpec, file: string, models: string) {
  const r = await importModel(file, models, { dtypes: ["fp32"] });
  const ref = await onnxLogits(r.dir, TOKENS);
  const model = await llama.loadModel({ modelPath: file });
  let got: Float32Array;
  try {
    got = await llamaLogits(model, TOKENS, s.vocab, { threads: 1, f32Cache: true });
  } finally {
    await model.dispose();
  }
  return { ref, got, corr: positionCorrelations(ref, got, s.vocab) };
}

describe.each(["llama", "qwen2", "qwen3", "phi3"] as const)("GGUF %s imported, against llama.cpp on the same file", (arch) => {
  const s = spec(arch);
  test.each(FORMATS)("%s", async (format) => {
    const file = join(root, `${arch}-${format}.gguf`);
    await writeGgufModel(s, format, file, { weights: variedNorms(s) });
    const { ref, got, corr } = await compare(s, file, join(root, `models-${arch}-${format}`));
    const min = Math.min(...corr);
    console.log(`${arch} ${format}: min r ${min.toFixed(6)} (bound ${required(s, format).toFixed(4)})`);
    expect(min).toBeGreaterThan(required(s, format));
    // At F32 greedy decoding agrees token for token.
    if (format === "f32") for (let p = 0; p < TOKENS.length; p++) expect(argmax(ref, p * s.vocab, s.vocab)).toBe(argmax(got, p * s.vocab, s.vocab));
  });
});

test("Llama 3.1's rope_freqs travel from the file into kiln's rotary (factors strong enough to matter at 32 positions)", async () => {
  const s: ModelSpec = { ...spec("llama"), id: "gguf-freqs-v1", ropeFreqFactors: Array.from({ length: 32 }, (_, i) => 0.02 + i * 0.03) };
  const file = join(root, "llama-freqs-f32.gguf");
  await writeGgufModel(s, "f32", file, { weights: variedNorms(s) });
  const { corr } = await compare(s, file, join(root, "models-freqs"));
  expect(Math.min(...corr)).toBeGreaterThan(0.9999);
  // The same file without the factors is another model: kiln does not agree with it, so the factors were used.
  const plain = join(root, "llama-plain-f32.gguf");
  const { ropeFreqFactors: _, ...without } = s;
  await writeGgufModel({ ...without, id: "gguf-plain-v1" }, "f32", plain, { weights: variedNorms(s) });
  const other = await llama.loadModel({ modelPath: plain });
  try {
    const r = await importModel(file, join(root, "models-freqs"), { dtypes: ["fp32"] });
    const mixed = positionCorrelations(await onnxLogits(r.dir, TOKENS), await llamaLogits(other, TOKENS, s.vocab, { threads: 1, f32Cache: true }), s.vocab);
    expect(Math.min(...mixed)).toBeLessThan(0.99);
  } finally {
    await other.dispose();
  }
});

describe("files kiln refuses", () => {
  test("another architecture is named with the list kiln takes; nothing is left in the models dir", async () => {
    const file = join(root, "phi.gguf");
    await writeGgufModel(spec("llama"), "q8_0", file);
    const bytes = Buffer.from(await Bun.file(file).arrayBuffer());
    const at = bytes.indexOf("llama", bytes.indexOf("general.architecture"));
    bytes.write("gemma", at);
    writeFileSync(file, bytes);
    const models = join(root, "models-refused");
    await expect(importModel(file, models)).rejects.toThrow(/architecture "gemma" is not supported: kiln imports llama, qwen2, qwen3/);
    expect(() => readdirSync(models)).toThrow();
  });

  test("a truncated file is named as truncated, and nothing is half-written", async () => {
    const file = join(root, "cut.gguf");
    await writeGgufModel(spec("qwen2"), "q4_k_m", file);
    const bytes = Buffer.from(await Bun.file(file).arrayBuffer());
    writeFileSync(file, bytes.subarray(0, bytes.length - 1000));
    const models = join(root, "models-cut");
    await expect(importModel(file, models)).rejects.toThrow(/truncated/);
    expect(() => readdirSync(models)).toThrow();
  });

  test("a file that is not a GGUF says so", async () => {
    const file = join(root, "notes.gguf");
    writeFileSync(file, "these are not weights\n".repeat(10));
    await expect(importModel(file, join(root, "models-not"))).rejects.toThrow(/GGUF|magic/i);
  });
});
