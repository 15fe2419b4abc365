// Runs the project-local Bun with the given arguments, passing signals through and exiting with its code.
import { spawn } from "node:child_process";
import { dirname } from "node:path";
import { localBun, root } from "./bun-path.mjs";

const bun = localBun();
if (!bun) {
  console.error("kiln: Bun is not installed yet; run `npm start` or `node build/setup.mjs` first");
  process.exit(1);
}
const child = spawn(bun, process.argv.slice(2), {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, PATH: `${dirname(bun)}:${process.env.PATH ?? ""}` },
});
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
