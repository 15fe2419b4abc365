// `npm run bench`'s own arguments: flags that become environment variables, the scenario file they pick, and the rest
// (passed on to `bun test`). Plain JavaScript: build/bench.mjs runs under Node.

const FLAGS = { "--profile": "KILN_BENCH_PROFILE" };
/** Scenarios run instead of the throughput bench. */
export const SCENARIOS = {
  "--stored": "./test/load/stored-stream.load.ts",
  "--input-rules": "./test/load/input-rules.load.ts",
  "--upload": "./test/load/upload.load.ts",
  "--upload-s3": "./test/load/upload-s3.load.ts",
  "--file-burst": "./test/load/file-burst.load.ts",
  "--media-decode": "./test/load/media-decode.load.ts",
  "--media": "./test/load/media.load.ts",
  "--images": "./test/load/images.load.ts",
  "--embeddings": "./test/load/embeddings.load.ts",
  "--prefix": "./test/load/prefix.load.ts",
  "--live-bus": "./test/load/live-bus.load.ts",
  "--cluster": "./test/load/cluster.load.ts",
  "--batch": "./test/load/batch.load.ts",
  "--kv-join": "./test/load/kv-join.load.ts",
};
/** `--gguf <file.gguf | keyword>` (repeatable, or comma-separated): kiln against llama.cpp on the same files. */
export const GGUF_SCENARIO = "./test/load/gguf.load.ts";
export const GGUF_ENV = "KILN_BENCH_GGUF_FILES";

/** `{ env, file, rest }` for the arguments after `npm run bench --`, or `{ error }`. */
export function parseBenchArgs(argv) {
  const env = {};
  const rest = [];
  const gguf = [];
  let scenario;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const inline = arg.startsWith("--gguf=") ? arg.slice("--gguf=".length) : undefined;
    if (arg === "--gguf" || inline !== undefined) {
      const value = inline ?? argv[++i];
      const files = (value ?? "").split(",").filter(Boolean);
      if (!files.length || files.some((f) => f.startsWith("--"))) return { error: "--gguf needs a file (or a keyword such as bench-q4_k_m)" };
      gguf.push(...files);
    } else if (arg in FLAGS) env[FLAGS[arg]] = "1";
    else if (arg in SCENARIOS) scenario = SCENARIOS[arg];
    else rest.push(arg);
  }
  if (!gguf.length) return { env, file: scenario ?? "./test/load/chat.load.ts", rest };
  if (scenario) return { error: "--gguf is a scenario of its own; give it without another scenario flag" };
  env[GGUF_ENV] = gguf.join(",");
  return { env, file: GGUF_SCENARIO, rest };
}
