// buildModel: writes a complete transformers.js model folder (tokenizer, graphs, streamed weights, configs, manifest).
import { join } from "node:path";
import { combineHashes, MANIFEST_FILE } from "./content-hash.ts";
import { DataFile } from "./data-file.ts";
import { folderWriter } from "./folder-writer.ts";
import { isGpuDtype } from "./gpu-decoder-graph.ts";
import { manifestMedia, mediaJsonFiles, mediaModelConfig } from "./media-files.ts";
import { mediaArchitecture } from "./media-spec.ts";
import { builtSpecialIds, generationConfig, kilnManifest, modelConfig, type SpecialIds } from "./model-files.ts";
import type { GpuLengths } from "./gpu-decoder-graph.ts";
import { modelGraphs, modelPlan, onnxFile } from "./model-graphs.ts";
import { CONSTANT_PREFIX, type GraphBuilder } from "./onnx-builder.ts";
import { WeightSink } from "./sinks.ts";
import { specHash, validateSpec, type Dtype, type ModelSpec } from "./spec.ts";
import { buildTokenizer } from "./tokenizer.ts";
import { generateWeight, type Chunk, type PlanEntry } from "./weights.ts";
import { nextTurn } from "./next-turn.ts";

/** Where a build's weight values come from: the seeded generator (kiln's own models) or an imported file. */
export type WeightSource = (e: PlanEntry) => Iterable<Chunk>;

/** A tokenizer the build takes as it is (an imported model's), in place of the one kiln trains. */
export interface GivenTokenizer {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  ids: SpecialIds;
}

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
  /** The weights' values (default: generated from the spec's seed). */
  weights?: WeightSource;
  /** The tokenizer files as given (default: kiln's own byte-level BPE for the spec's vocabulary). */
  tokenizer?: GivenTokenizer;
  /** kiln.json fields written over the built manifest's (an import's id source, prompt format, capabilities). */
  manifest?: Record<string, unknown>;
  /** The dtypes that also get the one-token graph (default STEP_GRAPH_DTYPES: q4's). */
  stepDtypes?: readonly Dtype[];
  /**
   * q4 is written as transformers.js's GroupQueryAttention CPU export (fp32 activations, no one-token graph, its lengths
   * as `gpuLengths` says), the layout of onnx-community's `model_q4.onnx`: an operator's folder, for tests.
   */
  gqaQ4?: boolean;
  /** The build's identity in kiln.json's build.spec_hash (default: specHash of the spec); an import's names its source. */
  identity?: string;
}

/** Gives `to` every weight initializer of `from` (its own constants aside): the same inline bytes, the same data file's ranges. */
function shareWeights(from: GraphBuilder, to: GraphBuilder): void {
  for (const t of from.initializers) if (!t.name.startsWith(CONSTANT_PREFIX)) to.initializers.push(t);
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
  if (gpu.length && mediaArchitecture(spec)) throw new Error(`buildModel: ${gpu.join(", ")} are text-model formats; ${spec.id} has media encoders`);
  const { hashes, write, writeJson } = folderWriter(outDir, "buildModel", ["onnx"]);

  const media = mediaArchitecture(spec) !== null;
  if (media && opts.tokenizer) throw new Error("buildModel: a given tokenizer is for text models only");
  const built = opts.tokenizer ? null : buildTokenizer(spec.vocab, spec.contextLength, media);
  const tok = opts.tokenizer ?? { ...built!, ids: builtSpecialIds(built!.ids) };
  writeJson("tokenizer.json", tok.tokenizerJson, true);
  writeJson("tokenizer_config.json", tok.tokenizerConfig);
  writeJson("config.json", built && media ? mediaModelConfig(spec, built.ids, defaultDtype) : modelConfig(spec, tok.ids, defaultDtype));
  writeJson("generation_config.json", generationConfig(tok.ids));
  if (media) for (const [name, json] of Object.entries(mediaJsonFiles(spec))) writeJson(name, json);

  // One sink per graph file: each dtype's graphs (one for text, up to four for media), each with its own data file.
  const sinks = dtypes.flatMap((dtype) =>
    modelGraphs(spec, dtype, opts.gpuLengths, opts.gqaQ4 ? [] : opts.stepDtypes, opts.gqaQ4).map((t) => {
      const file = onnxFile(t.stem, dtype);
      const data = new DataFile(join(outDir, "onnx", `${file}_data`));
      return { file, name: t.name, route: t.route, companion: t.companion, sink: new WeightSink(dtype, t.graph, data, `${file}_data`, t.tied, t.int8Embedding ?? false) };
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
      for (const chunk of opts.weights ? opts.weights(e) : generateWeight(spec, e)) {
        for (const u of users) u.sink.chunk(u.e, chunk);
        done += chunk.rows * e.cols;
        opts.onProgress?.(done, total, e.name);
      }
      for (const u of users) u.sink.end(u.e);
      // Lets timers and signal handlers run during long builds.
      await nextTurn();
    }
  } finally {
    for (const s of sinks) hashes[`onnx/${s.file}_data`] = s.sink.data.close();
  }
  for (const s of sinks) {
    write(`onnx/${s.file}`, s.sink.graph.encode(s.name));
    if (s.companion) {
      shareWeights(s.sink.graph, s.companion.graph);
      write(`onnx/${s.companion.file}`, s.companion.graph.encode(s.name));
    }
  }

  const build = { specHash: opts.identity ?? specHash(spec, dtypes, defaultDtype), contentHash: combineHashes(hashes) };
  const manifest = kilnManifest(spec, dtypes, defaultDtype, build, built && media ? manifestMedia(spec, built.ids) : undefined);
  writeJson(MANIFEST_FILE, { ...manifest, ...opts.manifest });
  return { dir: outDir, files: Object.keys(hashes).sort() };
}
