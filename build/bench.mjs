// `npm run bench [-- --profile | --stored | --input-rules | --upload | --upload-s3 | --file-burst | --media-decode | --media | --images | --embeddings | --prefix | --live-bus | --cluster]`: runs the load bench (test/load/chat.load.ts), or one of its
// scenarios, under the project's Bun. `bun test` keeps unknown flags to itself, so the bench's own flags become
// environment variables or the scenario file here.
import { spawn, spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { localBun, root } from "./bun-path.mjs";

const FLAGS = { "--profile": "KILN_BENCH_PROFILE" };
/** Scenarios run instead of the throughput bench. */
const SCENARIOS = {
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
};

const bun = localBun();
if (!bun) {
  console.error("kiln: Bun is not installed yet; run `node build/setup.mjs` first");
  process.exit(1);
}
const env = { ...process.env, PATH: `${dirname(bun)}:${process.env.PATH ?? ""}` };
const rest = [];
let file = "./test/load/chat.load.ts";
for (const arg of process.argv.slice(2)) {
  if (arg in FLAGS) env[FLAGS[arg]] = "1";
  else if (arg in SCENARIOS) file = SCENARIOS[arg];
  else rest.push(arg);
}
// The cluster scenario runs Postgres, Redis and haproxy: the set-up installs them if they are missing.
if (file === SCENARIOS["--cluster"]) {
  const setup = spawnSync(process.execPath, ["build/setup.mjs", "--cluster"], { cwd: root, stdio: "inherit" });
  if (setup.status !== 0) process.exit(setup.status ?? 1);
}
const child = spawn(bun, ["test", "--timeout", "3600000", file, ...rest], { cwd: root, stdio: "inherit", env });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
