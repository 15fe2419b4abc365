// `npm run bench [-- --profile | --stored | … | --embeddings | … | --cluster | --gguf <file>]`: runs the load bench (test/load/chat.load.ts),
// or one of its scenarios (build/bench-args.mjs lists them), under the project's Bun. `bun test` keeps unknown flags to
// itself, so the bench's own flags become environment variables or the scenario file here.
import { spawn, spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { parseBenchArgs, SCENARIOS } from "./bench-args.mjs";
import { localBun, root } from "./bun-path.mjs";

const bun = localBun();
if (!bun) {
  console.error("kiln: Bun is not installed yet; run `node build/setup.mjs` first");
  process.exit(1);
}
const parsed = parseBenchArgs(process.argv.slice(2));
if ("error" in parsed) {
  console.error(`kiln bench: ${parsed.error}`);
  process.exit(2);
}
const { file, rest } = parsed;
const env = { ...process.env, ...parsed.env, PATH: `${dirname(bun)}:${process.env.PATH ?? ""}` };
// The cluster scenario runs Postgres, Redis and haproxy: the set-up installs them if they are missing.
if (file === SCENARIOS["--cluster"]) {
  const setup = spawnSync(process.execPath, ["build/setup.mjs", "--cluster"], { cwd: root, stdio: "inherit" });
  if (setup.status !== 0) process.exit(setup.status ?? 1);
}
const child = spawn(bun, ["test", "--timeout", "3600000", file, ...rest], { cwd: root, stdio: "inherit", env });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
