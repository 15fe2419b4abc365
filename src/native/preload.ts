// First import of the entry point: in the compiled executable, loads the embedded native libraries before sharp or ONNX Runtime.
import vipsPath from "@img/sharp-libvips-linux-x64/binary" with { type: "file" };
import ortPath from "onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1" with { type: "file" };
import { FFIType } from "bun:ffi";
import { version } from "../../package.json" with { type: "json" };
import { loadNativeLibraries, type LoadedLibraries, type NativeLibrary } from "./load-libraries.ts";
import { dataDirFrom } from "./runtime-dir.ts";

export const NATIVE_LIBRARIES: NativeLibrary[] = [
  { source: vipsPath, soname: "libvips-cpp.so.8.18.7", symbol: { name: "vips_version", args: [FFIType.i32], returns: FFIType.i32 } },
  { source: ortPath, soname: "libonnxruntime.so.1", symbol: { name: "OrtGetApiBase", args: [], returns: FFIType.ptr } },
];

/** What the preload did: null when not compiled (node_modules already holds the libraries beside the addons). */
export let nativeRuntime: LoadedLibraries | null = null;

// Workers of the executable share the process, and with it the libraries the main thread loaded.
if (Bun.isStandaloneExecutable && Bun.isMainThread) {
  try {
    nativeRuntime = loadNativeLibraries(NATIVE_LIBRARIES, { version, dataDir: dataDirFrom(process.env, Bun.argv.slice(2)) });
  } catch (e) {
    // Nothing else can start without these libraries: say why, plainly, instead of a bundled stack trace.
    console.error(`kiln: ${e instanceof Error ? e.message : String(e)}\nSet --data-dir (or KILN_DATA_DIR, or TMPDIR) to a writable folder on a filesystem that allows executables.`);
    process.exit(1);
  }
}
