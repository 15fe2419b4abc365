// Importing a Hugging Face folder: F32 safetensors give exactly the graphs kiln builds from the same weights, the
// import is done once, and bad folders fail with their reason and leave nothing in the models dir.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildModel } from "../../../../src/modelgen/build.ts";
import { writeHfFolder } from "../../../../src/modelgen/hf-write.ts";
import { importModel } from "../../../../src/modelgen/import/import-model.ts";
import { modelIdFrom } from "../../../../src/modelgen/import/model-id.ts";
import { PRESETS, type Architecture, type ModelSpec } from "../../../../src/modelgen/spec.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-import-hf-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const spec = (architecture: Architecture): ModelSpec => ({ ...PRESETS.tiny!, id: `imp-${architecture}-v1`, architecture, tiedEmbeddings: architecture !== "llama" });

describe.each(["llama", "qwen2", "qwen3", "phi3"] as const)("a Hugging Face %s folder", (arch) => {
  test("F32 safetensors in shards import to the very graphs kiln builds from the same weights", async () => {
    const s = spec(arch);
    const src = join(root, `hf-${arch}`);
    writeHfFolder(s, src, { dtype: "F32", shards: 3 });
    expect(readdirSync(src)).toContain("model.safetensors.index.json");
    const models = join(root, `models-${arch}`);
    const r = await importModel(src, models, { id: s.id, dtypes: ["fp32", "int8", "q4"] });
    expect(r).toMatchObject({ id: s.id, imported: true });
    const built = join(root, `built-${arch}`);
    await buildModel({ spec: s, dtypes: ["fp32", "int8", "q4"], outDir: built });
    for (const f of ["onnx/model.onnx", "onnx/model.onnx_data", "onnx/model_int8.onnx_data", "onnx/model_q4.onnx_data", "tokenizer.json"]) {
      expect(readFileSync(join(r.dir, f)).equals(readFileSync(join(built, f)))).toBe(true);
    }
    const manifest = JSON.parse(readFileSync(join(r.dir, "kiln.json"), "utf8"));
    expect(manifest).toMatchObject({ id: s.id, architecture: arch, owned_by: "operator", source: { format: "safetensors", path: src } });
    expect(manifest.source.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readdirSync(models)).toEqual([s.id]);
  });
});

describe("importing once", () => {
  test("a second import of the same folder does nothing; a changed one is imported again", async () => {
    const s = spec("qwen2");
    const src = join(root, "once");
    writeHfFolder(s, src, { dtype: "BF16" });
    const models = join(root, "models-once");
    expect((await importModel(src, models, { dtypes: ["int8"] })).imported).toBe(true);
    const again = await importModel(src, models, { dtypes: ["int8"] });
    expect(again).toMatchObject({ id: "once-v1", imported: false });
    writeHfFolder({ ...s, seed: 2 }, src, { dtype: "BF16" });
    const later = new Date(Date.now() + 5000);
    utimesSync(join(src, "model.safetensors"), later, later);
    expect((await importModel(src, models, { dtypes: ["int8"] })).imported).toBe(true);
    expect(readdirSync(models)).toEqual(["once-v1"]);
  });
});

describe("folders kiln refuses", () => {
  test("another architecture is named, with the list kiln takes, and nothing is written", async () => {
    const src = join(root, "gemma");
    writeHfFolder(spec("llama"), src, { dtype: "F16", config: { architectures: ["GemmaForCausalLM"], model_type: "gemma" } });
    const models = join(root, "models-gemma");
    await expect(importModel(src, models)).rejects.toThrow(/GemmaForCausalLM is not supported: kiln imports LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM/);
    expect(() => readdirSync(models)).toThrow();
  });

  test("a truncated safetensors file is named as truncated, and the models dir keeps nothing half-written", async () => {
    const src = join(root, "cut");
    writeHfFolder(spec("llama"), src, { dtype: "F16" });
    const file = join(src, "model.safetensors");
    truncateSync(file, readFileSync(file).length - 100);
    const models = join(root, "models-cut");
    await expect(importModel(src, models)).rejects.toThrow(/runs past the end of the file \(truncated/);
    expect(() => readdirSync(models)).toThrow();
  });

  test("a quantized checkpoint and a missing tensor fail with their names", async () => {
    const src = join(root, "short");
    writeHfFolder(spec("llama"), src, { dtype: "F16" });
    const file = join(src, "model.safetensors");
    const bytes = readFileSync(file);
    const len = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + len).toString());
    delete header["model.norm.weight"];
    let json = JSON.stringify(header);
    json += " ".repeat(len - Buffer.byteLength(json));
    writeFileSync(file, Buffer.concat([bytes.subarray(0, 8), Buffer.from(json), bytes.subarray(8 + len)]));
    const models = join(root, "models-short");
    await expect(importModel(src, models)).rejects.toThrow(/tensor model\.norm\.weight is missing/);
    // Everything under the models dir, dot-folders included: the half-built import was removed.
    expect(readdirSync(models)).toEqual([]);
    header["model.norm.weight"] = { dtype: "F8_E4M3", shape: [128], data_offsets: [0, 128] };
    json = JSON.stringify(header);
    const lenBuf = Buffer.alloc(8);
    lenBuf.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
    writeFileSync(file, Buffer.concat([lenBuf, Buffer.from(json), bytes.subarray(8 + len)]));
    await expect(importModel(src, models)).rejects.toThrow(/model\.norm\.weight is F8_E4M3; kiln imports F32, F16 and BF16 safetensors/);
  });
});

test("model ids from file and folder names follow kiln's id rule", () => {
  expect(modelIdFrom("Llama-3.2-1B-Instruct-Q4_K_M.gguf")).toBe("llama-3.2-1b-instruct-q4-k-m");
  expect(modelIdFrom("Qwen3-0.6B")).toBe("qwen3-0.6b");
  expect(modelIdFrom("mistral")).toBe("mistral-v1");
  expect(modelIdFrom("TinyLlama_v1.1")).toBe("tinyllama-v1.1");
});
