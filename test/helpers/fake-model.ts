// Writes a model folder that the registry accepts (files present, no real weights) for HTTP-level tests.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function writeFakeModel(modelsDir: string, folder: string, manifest: Record<string, unknown> | null): string {
  const dir = join(modelsDir, folder);
  mkdirSync(join(dir, "onnx"), { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_type: "llama", max_position_embeddings: 2048 }));
  writeFileSync(join(dir, "tokenizer.json"), "{}");
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ chat_template: "{{ messages }}" }));
  writeFileSync(join(dir, "onnx", "model.onnx"), "graph");
  if (manifest) writeFileSync(join(dir, "kiln.json"), JSON.stringify(manifest));
  return dir;
}

export function fakeManifest(id: string, extra: Record<string, unknown> = {}) {
  return {
    kiln_manifest: 2,
    id,
    display_name: id,
    owned_by: "kiln",
    created: 1767225600,
    architecture: "llama",
    context_length: 4096,
    default_dtype: "fp32",
    dtypes: ["fp32"],
    capabilities: { chat: true, tools: true, reasoning: true, vision: false, audio: false, image_generation: false },
    pricing: { input_per_million: 0.1, output_per_million: 0.4, per_image: null },
    batching: { max_batch: 16, left_padding: "exact" },
    ...extra,
  };
}
