// Builds the tiny default model once per test process into a shared cache folder keyed by the builder's sources.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildModel, DEFAULT_DTYPES, DEFAULT_MODEL_ID, PRESETS, specHash } from "../../build/model/index.ts";

const BUILDER_DIR = join(import.meta.dir, "..", "..", "build", "model");

/** Hash of the spec plus every builder source and corpus file, so any builder change gets a fresh cache entry. */
function cacheKey(): string {
  const h = createHash("sha256").update(specHash(PRESETS.tiny!, DEFAULT_DTYPES));
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

let pending: Promise<string> | null = null;

/**
 * Absolute path of a ready tiny model folder (`<tmp>/kiln-test-models/<key>/kiln-tiny-v1`). Concurrent test
 * processes each build into their own temp folder and rename it into place; the loser discards its copy.
 */
export function tinyModelDir(): Promise<string> {
  pending ??= (async () => {
    const root = join(tmpdir(), "kiln-test-models");
    const key = cacheKey();
    const final = join(root, key);
    const modelDir = join(final, DEFAULT_MODEL_ID);
    if (existsSync(join(modelDir, "kiln.json"))) return modelDir;
    mkdirSync(root, { recursive: true });
    const tmp = join(root, `${key}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    try {
      await buildModel({ spec: PRESETS.tiny!, dtypes: DEFAULT_DTYPES, outDir: join(tmp, DEFAULT_MODEL_ID) });
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
  return pending;
}
