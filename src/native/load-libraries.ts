// Unpacks the embedded native libraries and loads them, so the embedded `.node` addons find them already in memory.
import { dlopen, FFIType } from "bun:ffi";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { prepareDir, runtimeDirCandidates, runtimeKey } from "./runtime-dir.ts";
import { unpackFile } from "./unpack.ts";

export interface NativeLibrary {
  /** Path of the embedded copy (`/$bunfs/...` in the executable, node_modules otherwise). */
  source: string;
  /** The library's SONAME: the name the addons ask the dynamic loader for. */
  soname: string;
  /** One exported C symbol: bun:ffi needs at least one, and calling it proves the library works. */
  symbol: { name: string; args: FFIType[]; returns: FFIType };
}

export interface LoadedLibraries {
  dir: string;
  paths: string[];
  written: number;
}

// Kept for the life of the process: a closed handle would unload a library the addons still use.
const handles: unknown[] = [];

/**
 * Unpacks every library into the first usable runtime folder and dlopens it. The loader matches an addon's
 * DT_NEEDED entry against the SONAME of libraries already loaded, so once these are open, requiring
 * sharp's and onnxruntime's `.node` files (which Bun extracts to a temp file) resolves them.
 */
export function loadNativeLibraries(libs: NativeLibrary[], opts: { version: string; dataDir: string | null }): LoadedLibraries {
  const key = runtimeKey(opts.version, libs.map((l) => l.source));
  const uid = process.getuid?.() ?? 0;
  const errors: string[] = [];
  for (const dir of runtimeDirCandidates({ dataDir: opts.dataDir, key, uid })) {
    const privateRoot = dir.startsWith(tmpdir()) ? join(tmpdir(), `kiln-${uid}`) : undefined;
    if (!prepareDir(dir, privateRoot)) {
      errors.push(`${dir}: not writable`);
      continue;
    }
    try {
      let written = 0;
      const paths = libs.map((lib) => {
        const out = unpackFile(lib.source, dir, lib.soname);
        if (out.written) written++;
        return out.path;
      });
      libs.forEach((lib, i) => {
        const { name, args, returns } = lib.symbol;
        handles.push(dlopen(paths[i]!, { [name]: { args, returns } }));
      });
      // The first start read ~64 MB of library bytes into the heap to write them out: give that back now.
      if (written > 0) Bun.gc(true);
      return { dir, paths, written };
    } catch (e) {
      errors.push(`${dir}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  throw new Error(`could not unpack the native libraries (sharp's libvips, ONNX Runtime):\n  ${errors.join("\n  ")}`);
}
