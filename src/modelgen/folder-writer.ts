// The files of a model folder being built: an empty folder to start from, and each file written with its sha256
// recorded (the builds' content hash is taken over these).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface FolderWriter {
  /** Path (relative to the folder) → sha256 of each file written so far; builders add their streamed data files. */
  hashes: Record<string, string>;
  write(rel: string, content: string | Uint8Array): void;
  /** Indented JSON and a newline (`compact`: one line, for large files such as tokenizer.json). */
  writeJson(rel: string, v: unknown, compact?: boolean): void;
}

/** Opens `outDir` for a build (`what` names the builder in the error when the folder is not empty) with `subdirs` made. */
export function folderWriter(outDir: string, what: string, subdirs: readonly string[]): FolderWriter {
  if (existsSync(outDir) && readdirSync(outDir).length) throw new Error(`${what}: ${outDir} is not empty`);
  for (const d of subdirs) mkdirSync(join(outDir, d), { recursive: true });
  const hashes: Record<string, string> = {};
  const write = (rel: string, content: string | Uint8Array) => {
    writeFileSync(join(outDir, rel), content);
    hashes[rel] = createHash("sha256").update(content).digest("hex");
  };
  return { hashes, write, writeJson: (rel, v, compact = false) => write(rel, JSON.stringify(v, null, compact ? undefined : 2) + "\n") };
}
