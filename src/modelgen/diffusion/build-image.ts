// buildImageModel: writes a complete few-step Stable Diffusion folder in optimum's ONNX Runtime layout, plus kiln.json.
import { join } from "node:path";
import { combineHashes, MANIFEST_FILE } from "../content-hash.ts";
import { DataFile } from "../data-file.ts";
import { folderWriter } from "../folder-writer.ts";
import { GraphBuilder } from "../onnx-builder.ts";
import { clipTokenizerFiles } from "./clip-tokenizer.ts";
import { imageManifest, modelIndex, schedulerConfig, textEncoderConfig, unetConfig, vaeConfig } from "./image-files.ts";
import { imageSpecHash, validateImageSpec, type ImageModelSpec } from "./image-spec.ts";
import type { Net } from "./layers.ts";
import { ParamStore } from "./params.ts";
import { textEncoderGraph } from "./text-encoder-graph.ts";
import { unetGraph } from "./unet-graph.ts";
import { vaeDecoderGraph, vaeEncoderGraph } from "./vae-graphs.ts";
import { nextTurn } from "../next-turn.ts";

/** Each graph's folder, its name inside model.onnx, and how it is built. */
const GRAPHS: readonly { dir: string; name: string; build: (n: Net, spec: ImageModelSpec) => void }[] = [
  { dir: "text_encoder", name: "kiln-clip-text", build: textEncoderGraph },
  { dir: "unet", name: "kiln-unet", build: unetGraph },
  { dir: "vae_decoder", name: "kiln-vae-decoder", build: vaeDecoderGraph },
  { dir: "vae_encoder", name: "kiln-vae-encoder", build: vaeEncoderGraph },
];

export const GRAPH_FILE = "model.onnx";
export const DATA_FILE = "model.onnx_data";

/** Parameters per graph folder, from a dry run that builds the graphs without generating any values. */
export function imageParamCounts(spec: ImageModelSpec): Record<string, number> {
  validateImageSpec(spec);
  const counts: Record<string, number> = {};
  for (const t of GRAPHS) {
    const g = new GraphBuilder();
    const p = new ParamStore(g, spec.seed, spec.initGain, null, DATA_FILE);
    t.build({ g, p }, spec);
    counts[t.dir] = p.count;
  }
  return counts;
}

export interface ImageBuildOptions {
  spec: ImageModelSpec;
  /** The model folder itself; it must not exist yet or be empty. */
  outDir: string;
  /** Called after each tensor with values generated so far, their total, and `<graph>/<tensor name>`. */
  onProgress?: (done: number, total: number, label: string) => void;
}

export async function buildImageModel(opts: ImageBuildOptions): Promise<{ dir: string; files: string[] }> {
  const { spec, outDir } = opts;
  validateImageSpec(spec);
  const { hashes, write, writeJson } = folderWriter(outDir, "buildImageModel", ["tokenizer", "scheduler", ...GRAPHS.map((t) => t.dir)]);

  const tok = clipTokenizerFiles(spec.vocab, spec.tokenizerJson);
  for (const [name, text] of Object.entries(tok.files)) write(`tokenizer/${name}`, text);
  writeJson("model_index.json", modelIndex(spec));
  writeJson("scheduler/scheduler_config.json", schedulerConfig(spec));
  writeJson("text_encoder/config.json", textEncoderConfig(spec, tok.vocab));
  writeJson("unet/config.json", unetConfig(spec));
  writeJson("vae_decoder/config.json", vaeConfig(spec));
  writeJson("vae_encoder/config.json", vaeConfig(spec));

  const total = Object.values(imageParamCounts(spec)).reduce((a, b) => a + b, 0);
  let done = 0;
  for (const t of GRAPHS) {
    const g = new GraphBuilder();
    const data = new DataFile(join(outDir, t.dir, DATA_FILE));
    const report = (size: number, name: string) => opts.onProgress?.((done += size), total, `${t.dir}/${name}`);
    try {
      t.build({ g, p: new ParamStore(g, spec.seed, spec.initGain, data, DATA_FILE, report) }, spec);
    } finally {
      hashes[`${t.dir}/${DATA_FILE}`] = data.close();
    }
    write(`${t.dir}/${GRAPH_FILE}`, g.encode(t.name));
    // Lets timers and signal handlers run between graphs.
    await nextTurn();
  }

  writeJson(MANIFEST_FILE, imageManifest(spec, { specHash: imageSpecHash(spec), contentHash: combineHashes(hashes) }));
  return { dir: outDir, files: Object.keys(hashes).sort() };
}
