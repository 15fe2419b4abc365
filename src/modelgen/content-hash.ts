// The content hash of a model folder: sha256 over "<relative path>\t<sha256 of file>\n" lines, sorted by path, kiln.json excluded.
import { createHash } from "node:crypto";
import { closeSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

export const MANIFEST_FILE = "kiln.json";

/** Combines per-file hashes (relative path → hex sha256) into the folder's content hash. */
export function combineHashes(files: Record<string, string>): string {
  const h = createHash("sha256");
  for (const path of Object.keys(files).filter((p) => p !== MANIFEST_FILE).sort()) h.update(`${path}\t${files[path]}\n`);
  return h.digest("hex");
}

export function hashFile(path: string): string {
  const h = createHash("sha256");
  const fd = openSync(path, "r");
  const buf = new Uint8Array(1 << 22);
  try {
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return h.digest("hex");
}

/** Relative paths (with "/") of every file under dir, sorted. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p).split(sep).join("/"));
    }
  };
  walk(dir);
  return out.sort();
}

/** Re-hashes a folder from disk. */
export function folderContentHash(dir: string): string {
  const files: Record<string, string> = {};
  for (const f of listFiles(dir)) if (f !== MANIFEST_FILE) files[f] = hashFile(join(dir, f));
  return combineHashes(files);
}
