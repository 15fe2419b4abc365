// What identifies an import's source: its path, size and modification time (checked at every start, at no cost) and
// the sha256 of its bytes (taken once, at import; a folder's files are hashed in name order).
import { createHash } from "node:crypto";
import { closeSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

export interface SourceRecord {
  path: string;
  size: number;
  mtime_ms: number;
  /** Empty when not hashed (a start's quick check). */
  sha256: string;
}

/** The files of a folder that make up a model (weights, configs, tokenizer, template), in name order. */
function folderFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /\.(safetensors|json|jinja|model)$/.test(f))
    .sort()
    .map((f) => join(dir, f));
}

function hashInto(h: ReturnType<typeof createHash>, path: string): void {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(1 << 22);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
}

export function sourceFingerprint(path: string, opts: { hash: boolean }): SourceRecord {
  const abs = resolve(path);
  const st = statSync(abs);
  const files = st.isDirectory() ? folderFiles(abs) : [abs];
  let size = 0;
  let mtime = 0;
  for (const f of files) {
    const s = statSync(f);
    size += s.size;
    mtime = Math.max(mtime, Math.floor(s.mtimeMs));
  }
  let sha256 = "";
  if (opts.hash) {
    const h = createHash("sha256");
    for (const f of files) {
      h.update(`${f.slice(abs.length)}\n`);
      hashInto(h, f);
    }
    sha256 = h.digest("hex");
  }
  return { path: abs, size, mtime_ms: mtime, sha256 };
}
