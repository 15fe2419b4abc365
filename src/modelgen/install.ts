// Installs a built model into a models dir atomically (build in a hidden temp folder, then rename), skipping identical builds.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { buildModel } from "./build.ts";
import { folderContentHash, MANIFEST_FILE } from "./content-hash.ts";
import { buildImageModel } from "./diffusion/build-image.ts";
import { TINY_IMAGE_MODEL_ID } from "./diffusion/image-presets.ts";
import { imageSpecHash, isImageSpec } from "./diffusion/image-spec.ts";
import { buildEmbeddingModel } from "./embedding-files.ts";
import { embeddingSpecHash, isEmbeddingSpec, TINY_EMBED_MODEL_ID } from "./embedding-spec.ts";
import { presetSpec, type AnySpec } from "./presets.ts";
import { DEFAULT_MEDIA_MODEL_ID, DEFAULT_MODEL_ID, specHash, type Dtype } from "./spec.ts";

/** True when `dir` holds a complete build with this spec hash whose files still match the recorded content hash. */
export function isIdenticalBuild(dir: string, expectedSpecHash: string): boolean {
  try {
    const m = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as { build?: { spec_hash?: string; content_hash?: string } };
    if (m.build?.spec_hash !== expectedSpecHash || !m.build.content_hash) return false;
    return folderContentHash(dir) === m.build.content_hash;
  } catch {
    return false;
  }
}

export function uniqueSuffix(): string {
  return `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Puts the finished folder `tmp` at `dir` (beside it, in the same models dir): an older `dir` is moved aside first, then removed. */
export function swapInto(tmp: string, dir: string): void {
  if (existsSync(dir)) {
    const old = join(dirname(dir), `.${basename(dir)}.old-${uniqueSuffix()}`);
    renameSync(dir, old);
    renameSync(tmp, dir);
    rmSync(old, { recursive: true, force: true });
  } else {
    renameSync(tmp, dir);
  }
}

export interface InstallOptions {
  /** A text (or multimodal) spec, or an image spec (built in fp32 only). */
  spec: AnySpec;
  /** CPU formats fp32, q4, int8; WebGPU formats fp16, q4f16 (text specs only: model_fp16.onnx, model_q4f16.onnx). */
  dtypes: Dtype[];
  defaultDtype?: Dtype;
  /** Rebuild even when an identical build is present. */
  force?: boolean;
  onProgress?: (done: number, total: number, label: string) => void;
}

/**
 * Builds `spec` into `<modelsDir>/<spec.id>` unless an identical build is already there. The build goes to a
 * dot-folder (which the registry skips) and is renamed into place, so readers never see a half-written model.
 */
export async function installModel(modelsDir: string, opts: InstallOptions): Promise<{ dir: string; built: boolean }> {
  const { spec } = opts;
  const dir = join(modelsDir, spec.id);
  const fp32Only = isImageSpec(spec) ? "an image model" : isEmbeddingSpec(spec) ? "an embedding model" : null;
  if (fp32Only && (opts.dtypes.some((d) => d !== "fp32") || (opts.defaultDtype ?? "fp32") !== "fp32")) {
    throw new Error(`${spec.id} is ${fp32Only}: it is built in fp32 only`);
  }
  const hash = isImageSpec(spec) ? imageSpecHash(spec) : isEmbeddingSpec(spec) ? embeddingSpecHash(spec) : specHash(spec, opts.dtypes, opts.defaultDtype);
  if (!opts.force && isIdenticalBuild(dir, hash)) return { dir, built: false };
  mkdirSync(modelsDir, { recursive: true });
  const tmp = join(modelsDir, `.${spec.id}.tmp-${uniqueSuffix()}`);
  try {
    if (isImageSpec(spec)) await buildImageModel({ spec, outDir: tmp, onProgress: opts.onProgress });
    else if (isEmbeddingSpec(spec)) await buildEmbeddingModel({ spec, outDir: tmp });
    else await buildModel({ spec, dtypes: opts.dtypes, defaultDtype: opts.defaultDtype, outDir: tmp, onProgress: opts.onProgress });
    swapInto(tmp, dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { dir, built: true };
}

/** The built-in models' dtypes (fp32). */
export const DEFAULT_DTYPES: Dtype[] = ["fp32"];

/**
 * A built-in model's formats: fp32 for the CPU, and for text models also q4f16, the format the webgpu device runs
 * (so the binary an operator copies onto a GPU box uses the GPU with its default model; 0.1 s more to build).
 */
export function builtinDtypes(spec: AnySpec): Dtype[] {
  return isImageSpec(spec) || isEmbeddingSpec(spec) || spec.vision || spec.audio ? DEFAULT_DTYPES : [...DEFAULT_DTYPES, "q4f16"];
}

/**
 * The built-in models, by id: the default (the tiny preset), the tiny model with both encoders (tiny-omni), the tiny
 * image model and the tiny embedding model.
 */
export const BUILTIN_PRESETS: Readonly<Record<string, string>> = {
  [DEFAULT_MODEL_ID]: "tiny",
  [DEFAULT_MEDIA_MODEL_ID]: "tiny-omni",
  [TINY_IMAGE_MODEL_ID]: "tiny-image",
  [TINY_EMBED_MODEL_ID]: "tiny-embed",
};
export const BUILTIN_MODEL_IDS: readonly string[] = Object.freeze(Object.keys(BUILTIN_PRESETS));

/**
 * Installs the built-in models named (all of them by default: the text default and, beside it, tiny-omni, tiny-image
 * and tiny-embed, so media input, image generation and embeddings run end to end on a fresh clone). Returns their folders.
 */
export async function ensureDefaultModel(modelsDir: string, ids: readonly string[] = BUILTIN_MODEL_IDS): Promise<string[]> {
  const dirs: string[] = [];
  for (const id of ids) {
    const spec = presetSpec(BUILTIN_PRESETS[id] ?? "");
    if (!spec || spec.id !== id) throw new Error(`"${id}" is not a built-in model`);
    dirs.push((await installModel(modelsDir, { spec, dtypes: builtinDtypes(spec) })).dir);
  }
  return dirs;
}
