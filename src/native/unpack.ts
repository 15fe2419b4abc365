// Copies an embedded file to a real path once (atomically), so the dynamic loader can open it on later starts too.
import { closeSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * Writes `source` (a path inside the executable, or any readable file) to `<dir>/<name>` unless a file of the
 * same size is already there. Two processes starting at once each write a temp file and rename it into place,
 * so neither ever sees a half-written library.
 */
export function unpackFile(source: string, dir: string, name: string): { path: string; written: boolean } {
  const dest = join(dir, name);
  const size = statSync(source).size;
  try {
    if (statSync(dest).size === size) return { path: dest, written: false };
  } catch {
    // Not there yet.
  }
  const temp = join(dir, `.${name}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  const bytes = readFileSync(source);
  const fd = openSync(temp, "w", 0o755);
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, dest);
  } catch (e) {
    unlinkSync(temp);
    throw e;
  }
  return { path: dest, written: true };
}
