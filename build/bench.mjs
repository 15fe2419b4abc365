// `npm run bench [-- --profile]`: runs the load bench (test/load/chat.load.ts) under the project's Bun. `bun test`
// keeps unknown flags to itself, so the bench's own flags become environment variables here.
import { spawn } from "node:child_process";
import { dirname } from "node:path";
import { localBun, root } from "./bun-path.mjs";

const FLAGS = { "--profile": "KILN_BENCH_PROFILE" };

const bun = localBun();
if (!bun) {
  console.error("kiln: Bun is not installed yet; run `node build/setup.mjs` first");
  process.exit(1);
}
const env = { ...process.env, PATH: `${dirname(bun)}:${process.env.PATH ?? ""}` };
const rest = [];
for (const arg of process.argv.slice(2)) {
  if (arg in FLAGS) env[FLAGS[arg]] = "1";
  else rest.push(arg);
}
const child = spawn(bun, ["test", "--timeout", "3600000", "./test/load/chat.load.ts", ...rest], { cwd: root, stdio: "inherit", env });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
