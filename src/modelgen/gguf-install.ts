// GGUF files of a spec in a folder, named by format and build hash: rebuilt when the spec, seed or writer changes, written atomically.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeGgufModel, type GgufFormat } from "./gguf-model.ts";
import { BUILDER_VERSION, canonicalJson, type ModelSpec } from "./spec.ts";

/** Bumped whenever the GGUF writer's output for a given spec changes. */
export const GGUF_WRITER_VERSION = 2;

/** `<id>-<format>-<12 hex of the build hash>.gguf`: a changed spec or writer gets a new name, never a stale file. */
export function ggufFileName(spec: ModelSpec, format: GgufFormat): string {
  const hash = createHash("sha256").update(canonicalJson({ spec, format, builder: BUILDER_VERSION, gguf: GGUF_WRITER_VERSION })).digest("hex");
  return `${spec.id}-${format}-${hash.slice(0, 12)}.gguf`;
}

/**
 * Writes `spec` as `format` into `dir` unless that exact build is there. The file is written under a dot-name and
 * renamed, so a reader never sees half a file; older builds of the same id and format are removed.
 */
export async function installGguf(
  dir: string,
  spec: ModelSpec,
  format: GgufFormat,
  onProgress?: (done: number, total: number, label: string) => void,
): Promise<{ path: string; built: boolean }> {
  const name = ggufFileName(spec, format);
  const path = join(dir, name);
  if (existsSync(path)) return { path, built: false };
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${name}.tmp-${process.pid}`);
  try {
    await writeGgufModel(spec, format, tmp, { onProgress });
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
  const stale = new RegExp(`^${spec.id.replace(/[.]/g, "\\.")}-${format}-[0-9a-f]{12}\\.gguf$`);
  for (const f of readdirSync(dir)) if (f !== name && stale.test(f)) rmSync(join(dir, f), { force: true });
  return { path, built: true };
}
