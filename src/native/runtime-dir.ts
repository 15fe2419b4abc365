// Where the compiled executable unpacks its native libraries: one folder per kiln version and embedded-library set.
import { lstatSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../config.ts";

/**
 * `<version>-<hash>`: the hash covers the embedded files' names, which carry Bun's content hash, so two builds
 * with different libraries (or two kiln versions) never share a folder.
 */
export function runtimeKey(version: string, embeddedPaths: string[]): string {
  const names = embeddedPaths.map((p) => p.slice(p.lastIndexOf("/") + 1)).sort().join("\n");
  const hash = Bun.hash.wyhash(names).toString(16).padStart(16, "0").slice(0, 12);
  return `${version.replace(/[^\w.-]/g, "_")}-${hash}`;
}

/** The data dir kiln will use, from the same flags and variables as the config; null when they do not parse. */
export function dataDirFrom(env: Record<string, string | undefined>, argv: string[]): string | null {
  try {
    return loadConfig(env, argv).dataDir;
  } catch {
    // main reports the bad option itself; the libraries still need a home so it can get that far.
    return null;
  }
}

/** Folders to try, best first: under the data dir, then a per-user private folder in the temp dir. */
export function runtimeDirCandidates(opts: { dataDir: string | null; key: string; tmp?: string; uid?: number }): string[] {
  const uid = opts.uid ?? process.getuid?.() ?? 0;
  const dirs = opts.dataDir ? [join(opts.dataDir, "runtime", opts.key)] : [];
  dirs.push(join(opts.tmp ?? tmpdir(), `kiln-${uid}`, "runtime", opts.key));
  return dirs;
}

/**
 * Creates `dir` (and parents). A folder under the shared temp dir must be ours and not a symlink, or
 * another user could plant a library there that we would then load.
 */
export function prepareDir(dir: string, privateRoot?: string): boolean {
  try {
    if (privateRoot) {
      mkdirSync(privateRoot, { recursive: true, mode: 0o700 });
      const st = lstatSync(privateRoot);
      if (!st.isDirectory() || st.isSymbolicLink() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) return false;
    }
    mkdirSync(dir, { recursive: true });
    return true;
  } catch {
    return false;
  }
}
