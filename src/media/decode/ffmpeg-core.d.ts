// Types for @ffmpeg/core (ffmpeg compiled to WebAssembly), which ships none: the parts kiln calls.
declare module "@ffmpeg/core" {
  export interface FFmpegLogLine {
    type: "stdout" | "stderr";
    message: string;
  }
  export interface FFmpegFS {
    writeFile(path: string, data: Uint8Array, opts?: { canOwn?: boolean }): void;
    readFile(path: string): Uint8Array;
    readdir(path: string): string[];
    unlink(path: string): void;
  }
  export interface FFmpegCore {
    FS: FFmpegFS;
    /** Runs `ffmpeg -nostdin -y <args>`; 0 on success. */
    exec(...args: string[]): number;
    /** Runs `ffprobe <args>`; its report arrives as stdout log lines. */
    ffprobe(...args: string[]): number;
    setLogger(logger: (line: FFmpegLogLine) => void): void;
  }
  export interface FFmpegCoreOptions {
    /** Emscripten's hook: instantiate the module with `imports` and hand the instance to `done`. */
    instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void): object;
  }
  const createFFmpegCore: (options: FFmpegCoreOptions) => Promise<FFmpegCore>;
  export default createFFmpegCore;
}

declare module "@ffmpeg/core/wasm" {
  /** Imported with `{ type: "file" }`: the path of the .wasm (embedded in the executable when compiled). */
  const path: string;
  export default path;
}
