// Installs a built model into a models dir atomically (build in a hidden temp folder, then rename), skipping identical builds.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildModel } from "./build.ts";
import { folderContentHash, MANIFEST_FILE } from "./content-hash.ts";
import { DEFAULT_MEDIA_MODEL_ID, DEFAULT_MODEL_ID, PRESETS, specHash, type Dtype, type ModelSpec } from "./spec.ts";

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

function uniqueSuffix(): string {
  return `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

export interface InstallOptions {
  spec: ModelSpec;
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
  const dir = join(modelsDir, opts.spec.id);
  const hash = specHash(opts.spec, opts.dtypes, opts.defaultDtype);
  if (!opts.force && isIdenticalBuild(dir, hash)) return { dir, built: false };
  mkdirSync(modelsDir, { recursive: true });
  const tmp = join(modelsDir, `.${opts.spec.id}.tmp-${uniqueSuffix()}`);
  try {
    await buildModel({ spec: opts.spec, dtypes: opts.dtypes, defaultDtype: opts.defaultDtype, outDir: tmp, onProgress: opts.onProgress });
    if (existsSync(dir)) {
      const old = join(modelsDir, `.${opts.spec.id}.old-${uniqueSuffix()}`);
      renameSync(dir, old);
      renameSync(tmp, dir);
      rmSync(old, { recursive: true, force: true });
    } else {
      renameSync(tmp, dir);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { dir, built: true };
}

/** The built-in models' dtypes (fp32). */
export const DEFAULT_DTYPES: Dtype[] = ["fp32"];

/** The built-in models, by id: the default (the tiny preset) and the tiny model with both encoders (tiny-omni). */
export const BUILTIN_PRESETS: Readonly<Record<string, string>> = { [DEFAULT_MODEL_ID]: "tiny", [DEFAULT_MEDIA_MODEL_ID]: "tiny-omni" };
export const BUILTIN_MODEL_IDS: readonly string[] = Object.freeze(Object.keys(BUILTIN_PRESETS));

/**
 * Installs the built-in models named (all of them by default: the text default and, beside it, tiny-omni, so media
 * runs end to end on a fresh clone). Returns their folders.
 */
export async function ensureDefaultModel(modelsDir: string, ids: readonly string[] = BUILTIN_MODEL_IDS): Promise<string[]> {
  const dirs: string[] = [];
  for (const id of ids) {
    const spec = PRESETS[BUILTIN_PRESETS[id] ?? ""];
    if (!spec || spec.id !== id) throw new Error(`"${id}" is not a built-in model`);
    dirs.push((await installModel(modelsDir, { spec, dtypes: DEFAULT_DTYPES })).dir);
  }
  return dirs;
}
