// Where the compiled executable unpacks its native libraries: one folder per kiln version and embedded-library set.
import { existsSync, lstatSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, stripConfigFlags } from "../config.ts";

/**
 * `<version>-<hash>`: the hash covers the embedded files' names, which carry Bun's content hash, so two builds
 * with different libraries (or two kiln versions) never share a folder.
 */
export function runtimeKey(version: string, embeddedPaths: string[]): string {
  const names = embeddedPaths.map((p) => p.slice(p.lastIndexOf("/") + 1)).sort().join("\n");
  const hash = Bun.hash.wyhash(names).toString(16).padStart(16, "0").slice(0, 12);
  return `${version.replace(/[^\w.-]/g, "_")}-${hash}`;
}

/** Commands that only print something: asking for the version must not create a data dir. */
const INFORMATIONAL = new Set(["--version", "-v", "version", "help", "--help", "-h"]);

/**
 * The data dir to unpack into, from the same flags and variables as the config. Null (use the temp dir) when
 * they do not parse (main reports that itself), or for an informational command before any data dir exists.
 */
export function dataDirFrom(env: Record<string, string | undefined>, argv: string[], exists: (path: string) => boolean = existsSync): string | null {
  try {
    const dataDir = loadConfig(env, argv).dataDir;
    const command = stripConfigFlags(argv)[0] ?? "serve";
    if (INFORMATIONAL.has(command) && !exists(dataDir)) return null;
    return dataDir;
  } catch {
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
