// Runs ffmpeg compiled to WebAssembly (@ffmpeg/core) on bytes in memory: the module compiles once per thread, each decode gets a fresh instance.
import createFFmpegCore, { type FFmpegCore } from "@ffmpeg/core";
import wasmPath from "@ffmpeg/core/wasm" with { type: "file" };

let compiled: Promise<WebAssembly.Module> | null = null;

/** Compiling the 32 MB module takes most of a second: done once, on the first audio or video decode of a thread. */
function wasmModule(): Promise<WebAssembly.Module> {
  compiled ??= Bun.file(wasmPath)
    .arrayBuffer()
    .then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}

/**
 * The core is built for browser workers and reads `self.location.href` once, synchronously, as it starts; Bun has no
 * `location`. It gets one only for that moment, so nothing else in the thread sees a browser-like global.
 */
function startCore(module: WebAssembly.Module): Promise<FFmpegCore> {
  const had = "location" in globalThis;
  if (!had) Object.defineProperty(globalThis, "location", { value: { href: import.meta.url }, configurable: true });
  try {
    return createFFmpegCore({
      instantiateWasm: (imports, done) => {
        void WebAssembly.instantiate(module, imports).then(done);
        return {};
      },
    });
  } finally {
    if (!had) delete (globalThis as { location?: unknown }).location;
  }
}

/** ffmpeg threw out of WebAssembly (a trap or an abort): the instance is unusable and the input undecodable. */
export class FFmpegCrash extends Error {}

/** One ffmpeg instance with its own in-memory file system, used for one decode and then dropped. */
export class FFmpegSession {
  /** ffmpeg's own messages (stderr), for telling truncation from corruption; never shown to clients. */
  readonly log: string[] = [];
  private stdout: string[] = [];

  private constructor(private readonly core: FFmpegCore) {
    core.setLogger((line) => (line.type === "stdout" ? this.stdout : this.log).push(line.message));
  }

  static async open(): Promise<FFmpegSession> {
    return new FFmpegSession(await startCore(await wasmModule()));
  }

  /** Hands `bytes` to the instance's file system without a copy. */
  write(name: string, bytes: Uint8Array): void {
    this.core.FS.writeFile(name, bytes, { canOwn: true });
  }

  read(name: string): Uint8Array | null {
    try {
      return this.core.FS.readFile(name);
    } catch {
      return null;
    }
  }

  /** File names in the working folder that start with `prefix`, sorted. */
  list(prefix: string): string[] {
    return this.core.FS.readdir(".").filter((f) => f.startsWith(prefix)).sort();
  }

  /** `ffmpeg <args>`: true when it exited 0. */
  run(args: string[]): boolean {
    return this.guard(() => this.core.exec(...args)) === 0;
  }

  /** `ffprobe` of `name` as JSON text (streams and format), or "" when it could not read the file. */
  probe(name: string): string {
    this.stdout = [];
    this.guard(() => this.core.ffprobe("-v", "error", "-print_format", "json", "-show_streams", "-show_format", name));
    return this.stdout.join("\n");
  }

  private guard(fn: () => number): number {
    try {
      return fn();
    } catch (e) {
      throw new FFmpegCrash(e instanceof Error ? e.message : String(e));
    }
  }
}
