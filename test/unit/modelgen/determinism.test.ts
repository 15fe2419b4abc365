// Builds are byte-identical for the same spec and seed, differ for another seed, and carry a truthful manifest.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildModel, DEFAULT_MODEL_ID, PRESETS, specHash } from "../../../src/modelgen/index.ts";
import { folderContentHash, listFiles } from "../../../src/modelgen/content-hash.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-build-det-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sha = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");
const tiny = PRESETS.tiny!;

describe("buildModel determinism", () => {
  test("two builds of the same spec are byte-identical; another seed changes the weights only", async () => {
    const a = await buildModel({ spec: tiny, dtypes: ["fp32", "q4"], outDir: join(root, "a") });
    const b = await buildModel({ spec: tiny, dtypes: ["fp32", "q4"], outDir: join(root, "b") });
    const c = await buildModel({ spec: { ...tiny, seed: 2 }, dtypes: ["fp32", "q4"], outDir: join(root, "c") });
    expect(a.files).toEqual([
      "config.json", "generation_config.json", "kiln.json", "onnx/model.onnx", "onnx/model.onnx_data",
      "onnx/model_q4.onnx", "onnx/model_q4.onnx_data", "onnx/model_step_q4.onnx", "tokenizer.json", "tokenizer_config.json",
    ]);
    expect(listFiles(a.dir)).toEqual(a.files);
    for (const f of a.files) expect(sha(join(b.dir, f))).toBe(sha(join(a.dir, f)));
    expect(sha(join(c.dir, "onnx/model.onnx_data"))).not.toBe(sha(join(a.dir, "onnx/model.onnx_data")));
    expect(sha(join(c.dir, "onnx/model_q4.onnx_data"))).not.toBe(sha(join(a.dir, "onnx/model_q4.onnx_data")));
    // The seed does not touch the tokenizer or the graph structure.
    expect(sha(join(c.dir, "tokenizer.json"))).toBe(sha(join(a.dir, "tokenizer.json")));
    expect(sha(join(c.dir, "onnx/model.onnx"))).toBe(sha(join(a.dir, "onnx/model.onnx")));
  });

  test("kiln.json has the manifest shape, and its hashes match the spec and the files", () => {
    const dir = join(root, "a");
    const m = JSON.parse(readFileSync(join(dir, "kiln.json"), "utf8"));
    expect(m).toEqual({
      kiln_manifest: 2,
      id: DEFAULT_MODEL_ID,
      display_name: "Kiln Tiny v1",
      owned_by: "kiln",
      created: 1767225600,
      architecture: "llama",
      context_length: 131072,
      default_dtype: "fp32",
      dtypes: ["fp32", "q4"],
      capabilities: { chat: true, tools: true, reasoning: true, vision: false, image_generation: false },
      pricing: { input_per_million: 0.1, output_per_million: 0.4, per_image: null },
      batching: { max_batch: 16, left_padding: "exact" },
      build: { seed: 1, spec_hash: specHash(tiny, ["fp32", "q4"]), content_hash: folderContentHash(dir) },
    });
    expect(m.build.spec_hash).toMatch(/^[0-9a-f]{64}$/);
    const cfg = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(cfg).toMatchObject({
      model_type: "llama", num_hidden_layers: 4, hidden_size: 128, num_attention_heads: 4, num_key_value_heads: 2,
      head_dim: 32, intermediate_size: 384, vocab_size: 2048, max_position_embeddings: 131072, tie_word_embeddings: false,
      eos_token_id: [2039, 2037], bos_token_id: 2037, pad_token_id: 2037, "transformers.js_config": { dtype: "fp32" },
    });
  });

  test("rejects a non-empty output folder and unknown dtypes", async () => {
    await expect(buildModel({ spec: tiny, dtypes: ["fp32"], outDir: join(root, "a") })).rejects.toThrow("is not empty");
    await expect(buildModel({ spec: tiny, dtypes: ["bf16" as "fp32"], outDir: join(root, "x") })).rejects.toThrow('unknown dtype "bf16"');
    await expect(buildModel({ spec: { ...tiny, heads: 3 }, dtypes: ["fp32"], outDir: join(root, "y") })).rejects.toThrow("multiple of spec.kvHeads");
  });
});
