// Builds the built-in models (the tiny text default, the tiny multimodal one, the tiny image one) once per test process
// into a shared cache folder keyed by the builder's sources, each in a models dir of its own.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildEmbeddingModel, buildImageModel, buildModel, builtinDtypes, embeddingSpecHash, imageSpecHash, isEmbeddingSpec, isImageSpec, presetSpec, specHash, type AnySpec,
} from "../../src/modelgen/index.ts";

const BUILDER_DIR = join(import.meta.dir, "..", "..", "src", "modelgen");

/** Hash of the spec plus every builder source and corpus file, so any builder change gets a fresh cache entry. */
function cacheKey(spec: AnySpec): string {
  const h = createHash("sha256").update(isImageSpec(spec) ? imageSpecHash(spec) : isEmbeddingSpec(spec) ? embeddingSpecHash(spec) : specHash(spec, builtinDtypes(spec)));
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p, `${rel}${name}/`);
      else h.update(`${rel}${name}\0`).update(readFileSync(p));
    }
  };
  walk(BUILDER_DIR, "");
  return h.digest("hex").slice(0, 16);
}

const pending = new Map<string, Promise<string>>();

/** Absolute path of a ready tiny text model folder (`<tmp>/kiln-test-models/<key>/kiln-tiny-v1`). */
export function tinyModelDir(): Promise<string> {
  return presetModelDir("tiny");
}

/** Absolute path of a ready built-in multimodal model folder (kiln-tiny-omni-v1: vision and audio). */
export function tinyOmniModelDir(): Promise<string> {
  return presetModelDir("tiny-omni");
}

/** Absolute path of a ready built-in embedding model folder (kiln-embed-tiny-v1: sentence-transformers layout). */
export function tinyEmbedModelDir(): Promise<string> {
  return presetModelDir("tiny-embed");
}

/** Absolute path of a ready built-in image model folder (kiln-tiny-image-v1: Stable Diffusion layout). */
export function tinyImageModelDir(): Promise<string> {
  return presetModelDir("tiny-image");
}

/**
 * A preset built once into `<tmp>/kiln-test-models/<key>/<id>`. Concurrent test processes each build into their
 * own temp folder and rename it into place; the loser discards its copy.
 */
export function presetModelDir(preset: string): Promise<string> {
  const spec = presetSpec(preset);
  if (!spec) throw new Error(`no preset ${preset}`);
  let dir = pending.get(preset);
  if (dir) return dir;
  dir = (async () => {
    const root = join(tmpdir(), "kiln-test-models");
    const key = cacheKey(spec);
    const final = join(root, key);
    const modelDir = join(final, spec.id);
    if (existsSync(join(modelDir, "kiln.json"))) return modelDir;
    mkdirSync(root, { recursive: true });
    const tmp = join(root, `${key}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    try {
      if (isImageSpec(spec)) await buildImageModel({ spec, outDir: join(tmp, spec.id) });
      else if (isEmbeddingSpec(spec)) await buildEmbeddingModel({ spec, outDir: join(tmp, spec.id) });
      else await buildModel({ spec, dtypes: builtinDtypes(spec), outDir: join(tmp, spec.id) });
      try {
        renameSync(tmp, final);
      } catch (e) {
        // Another process finished first: its folder is complete, so use it.
        if (!existsSync(join(modelDir, "kiln.json"))) throw e;
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return modelDir;
  })();
  pending.set(preset, dir);
  return dir;
}
