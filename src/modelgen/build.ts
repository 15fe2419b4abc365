// buildModel: writes a complete transformers.js model folder (tokenizer, graphs, streamed weights, configs, manifest).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { combineHashes, MANIFEST_FILE } from "./content-hash.ts";
import { DataFile } from "./data-file.ts";
import { isGpuDtype } from "./gpu-decoder-graph.ts";
import { manifestMedia, mediaJsonFiles, mediaModelConfig } from "./media-files.ts";
import { mediaLayout } from "./media-spec.ts";
import { generationConfig, kilnManifest, modelConfig } from "./model-files.ts";
import type { GpuLengths } from "./gpu-decoder-graph.ts";
import { modelGraphs, modelPlan, onnxFile } from "./model-graphs.ts";
import { WeightSink } from "./sinks.ts";
import { specHash, validateSpec, type Dtype, type ModelSpec } from "./spec.ts";
import { buildTokenizer } from "./tokenizer.ts";
import { generateWeight } from "./weights.ts";

export interface BuildOptions {
  spec: ModelSpec;
  dtypes: Dtype[];
  /** The model folder itself; it must not exist yet or be empty. */
  outDir: string;
  /** Defaults to the first of `dtypes`. */
  defaultDtype?: Dtype;
  /** Called after each tensor chunk with generated values so far, their total, and the tensor's name. */
  onProgress?: (done: number, total: number, label: string) => void;
  /** The GPU formats' length inputs (gpu-decoder-graph.ts); "attention_mask" writes transformers.js's I/O. */
  gpuLengths?: GpuLengths;
}

/** fp16 and q4f16 are the WebGPU formats (gpu-decoder-graph.ts), for text models only. */
export const DTYPES: readonly Dtype[] = ["fp32", "q4", "int8", "fp16", "q4f16"];

export async function buildModel(opts: BuildOptions): Promise<{ dir: string; files: string[] }> {
  const { spec, outDir } = opts;
  validateSpec(spec);
  const dtypes = [...new Set(opts.dtypes)];
  if (!dtypes.length) throw new Error("buildModel: no dtype requested");
  for (const d of dtypes) if (!DTYPES.includes(d)) throw new Error(`buildModel: unknown dtype "${d}" (use ${DTYPES.join(", ")})`);
  const defaultDtype = opts.defaultDtype ?? dtypes[0]!;
  if (!dtypes.includes(defaultDtype)) throw new Error(`buildModel: default dtype "${defaultDtype}" is not being built`);
  const gpu = dtypes.filter(isGpuDtype);
  if (gpu.length && mediaLayout(spec)) throw new Error(`buildModel: ${gpu.join(", ")} are text-model formats; ${spec.id} has media encoders`);
  if (existsSync(outDir) && readdirSync(outDir).length) throw new Error(`buildModel: ${outDir} is not empty`);
  mkdirSync(join(outDir, "onnx"), { recursive: true });

  const hashes: Record<string, string> = {};
  const writeText = (rel: string, text: string) => {
    writeFileSync(join(outDir, rel), text);
    hashes[rel] = createHash("sha256").update(text).digest("hex");
  };
  const writeJson = (rel: string, v: unknown, compact = false) => writeText(rel, JSON.stringify(v, null, compact ? undefined : 2) + "\n");

  const media = mediaLayout(spec) !== null;
  const tok = buildTokenizer(spec.vocab, spec.contextLength, media);
  writeJson("tokenizer.json", tok.tokenizerJson, true);
  writeJson("tokenizer_config.json", tok.tokenizerConfig);
  writeJson("config.json", media ? mediaModelConfig(spec, tok.ids, defaultDtype) : modelConfig(spec, tok.ids, defaultDtype));
  writeJson("generation_config.json", generationConfig(tok.ids));
  if (media) for (const [name, json] of Object.entries(mediaJsonFiles(spec))) writeJson(name, json);

  // One sink per graph file: each dtype's graphs (one for text, up to four for media), each with its own data file.
  const sinks = dtypes.flatMap((dtype) =>
    modelGraphs(spec, dtype, opts.gpuLengths).map((t) => {
      const file = onnxFile(t.stem, dtype);
      const data = new DataFile(join(outDir, "onnx", `${file}_data`));
      return { file, name: t.name, route: t.route, sink: new WeightSink(dtype, t.graph, data, `${file}_data`, t.tied) };
    }),
  );

  const plan = modelPlan(spec);
  const total = plan.reduce((s, e) => s + e.rows * e.cols, 0);
  let done = 0;
  try {
    for (const e of plan) {
      const users = sinks.flatMap((s) => {
        const routed = s.route(e);
        return routed ? [{ sink: s.sink, e: routed }] : [];
      });
      for (const u of users) u.sink.begin(u.e);
      for (const chunk of generateWeight(spec, e)) {
        for (const u of users) u.sink.chunk(u.e, chunk);
        done += chunk.rows * e.cols;
        opts.onProgress?.(done, total, e.name);
      }
      for (const u of users) u.sink.end(u.e);
      // Lets timers and signal handlers run during long builds.
      await new Promise<void>((r) => setImmediate(r));
    }
  } finally {
    for (const s of sinks) hashes[`onnx/${s.file}_data`] = s.sink.data.close();
  }
  for (const s of sinks) {
    const bytes = s.sink.graph.encode(s.name);
    writeFileSync(join(outDir, "onnx", s.file), bytes);
    hashes[`onnx/${s.file}`] = createHash("sha256").update(bytes).digest("hex");
  }

  const build = { specHash: specHash(spec, dtypes, defaultDtype), contentHash: combineHashes(hashes) };
  const manifest = kilnManifest(spec, dtypes, defaultDtype, build, media ? manifestMedia(spec, tok.ids) : undefined);
  writeJson(MANIFEST_FILE, manifest);
  return { dir: outDir, files: Object.keys(hashes).sort() };
}
