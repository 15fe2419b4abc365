// `kiln models import <file.gguf | folder>`: an operator's model compiled into a kiln model folder (kiln's own batched
// graphs, the source's tokenizer and chat template), built in a hidden folder and renamed into place, done once per
// source: a later import or start finds the folder by the source's size, time and hash and does nothing.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { buildModel } from "../build.ts";
import { MANIFEST_FILE } from "../content-hash.ts";
import { swapInto, uniqueSuffix } from "../install.ts";
import { BUILDER_VERSION, canonicalJson, type Dtype } from "../spec.ts";
import { capabilitiesOf } from "./capabilities.ts";
import { openGgufFile } from "./gguf-source.ts";
import { openHfFolder, type ImportSource } from "./hf-folder.ts";
import { sourceFingerprint, type SourceRecord } from "./source-hash.ts";
import { modelIdFrom } from "./model-id.ts";
import { storeWeights } from "./weight-source.ts";

/** The formats an import writes unless told: int8 (q4 for one-token passes) on the CPU, q4f16 on a GPU. */
export const IMPORT_DTYPES: readonly Dtype[] = ["int8", "q4", "q4f16"];

export interface ImportOptions {
  /** The model id (default: from the GGUF's general.name or the file or folder name). */
  id?: string;
  dtypes?: Dtype[];
  defaultDtype?: Dtype;
  /** Import again even when the folder is up to date. */
  force?: boolean;
  onProgress?: (done: number, total: number, label: string) => void;
}

export interface ImportResult {
  id: string;
  dir: string;
  /** False when an up-to-date import of this source was already there. */
  imported: boolean;
}

function readManifest(dir: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function open(path: string, id: string | undefined): ImportSource {
  const st = statSync(path);
  if (st.isDirectory()) {
    const name = id ?? modelIdFrom(basename(resolve(path)));
    return openHfFolder(path, name, basename(resolve(path)));
  }
  return openGgufFile(path, id);
}

/** The import's identity: its source's hash, the formats and the builder (a new builder redoes imports). */
function importIdentity(record: SourceRecord, dtypes: Dtype[], defaultDtype: Dtype, id: string): string {
  return createHash("sha256").update(canonicalJson({ source: record.sha256, dtypes, defaultDtype, id, builder: BUILDER_VERSION })).digest("hex");
}

/** Whether `dir` holds a finished import of exactly this source (by size and time first, so a start hashes nothing). */
export function isCurrentImport(dir: string, path: string): boolean {
  const m = readManifest(dir);
  const s = m?.source as Partial<SourceRecord> & { builder?: number } | undefined;
  if (!s || s.builder !== BUILDER_VERSION) return false;
  const fp = sourceFingerprint(path, { hash: false });
  return s.path === fp.path && s.size === fp.size && s.mtime_ms === fp.mtime_ms;
}

/** The folder in `modelsDir` holding a finished import of `path` as it is now, if any: found without opening the source. */
export function findCurrentImport(modelsDir: string, path: string, id?: string): ImportResult | null {
  if (!existsSync(modelsDir)) return null;
  for (const name of readdirSync(modelsDir)) {
    if (name.startsWith(".") || (id && name !== id)) continue;
    const dir = join(modelsDir, name);
    if (isCurrentImport(dir, path)) return { id: name, dir, imported: false };
  }
  return null;
}

export async function importModel(path: string, modelsDir: string, opts: ImportOptions = {}): Promise<ImportResult> {
  if (!existsSync(path)) throw new Error(`${path} does not exist`);
  const current = opts.force ? null : findCurrentImport(modelsDir, path, opts.id);
  if (current) return current;
  const source = open(path, opts.id);
  try {
    const { spec } = source;
    const dir = join(modelsDir, spec.id);
    const dtypes = [...new Set(opts.dtypes ?? IMPORT_DTYPES)];
    const defaultDtype = opts.defaultDtype ?? dtypes[0]!;
    const record: SourceRecord & { builder: number } = { ...sourceFingerprint(path, { hash: true }), builder: BUILDER_VERSION };
    const prior = readManifest(dir);
    const identity = importIdentity(record, dtypes, defaultDtype, spec.id);
    if (!opts.force && (prior?.build as { spec_hash?: string } | undefined)?.spec_hash === identity) return { id: spec.id, dir, imported: false };
    mkdirSync(modelsDir, { recursive: true });
    const tmp = join(modelsDir, `.${spec.id}.import-${uniqueSuffix()}`);
    try {
      await buildModel({
        spec,
        dtypes,
        defaultDtype,
        outDir: tmp,
        onProgress: opts.onProgress,
        weights: storeWeights(source.store),
        tokenizer: source.tokenizer,
        identity,
        manifest: {
          owned_by: "operator",
          capabilities: capabilitiesOf(source.tokenizer),
          source: { ...record, ...source.describe },
        },
      });
      swapInto(tmp, dir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return { id: spec.id, dir, imported: true };
  } finally {
    source.close();
  }
}
