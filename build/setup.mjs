// One-step set-up for a fresh clone: install the pinned Bun from npm into .tools/, then the locked dependencies.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { localBun, root, toolsDir, wantedVersion } from "./bun-path.mjs";

function run(cmd, args, cwd = root) {
  execFileSync(cmd, args, { cwd, stdio: "inherit", env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip" } });
}

let bun = localBun();
// Quiet when everything was already installed, so `npm run kiln -- …` prints only kiln's own output.
const quiet = Boolean(bun) && existsSync(join(root, "node_modules"));
if (!bun) {
  console.log(`kiln setup: installing Bun ${wantedVersion} from npm into .tools/`);
  mkdirSync(toolsDir, { recursive: true });
  const manifest = join(toolsDir, "package.json");
  if (!existsSync(manifest)) writeFileSync(manifest, JSON.stringify({ name: "kiln-tools", private: true }) + "\n");
  // --ignore-scripts: the platform package already holds the real binary; the postinstall only links it.
  run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", `bun@${wantedVersion}`], toolsDir);
  bun = localBun();
  if (!bun) throw new Error(`kiln setup: Bun ${wantedVersion} did not install under ${toolsDir}`);
}
const frozen = existsSync(join(root, "bun.lock")) ? ["--frozen-lockfile"] : [];
run(bun, ["install", ...frozen, ...(quiet ? ["--silent"] : [])]);

// Only `npm test` asks for the browser, WebGPU's driver and the cluster's servers: serving and building never need them.
const steps = [
  ["--browser", async () => (await import("./setup-browser.mjs")).setupBrowser()],
  ["--webgpu", async () => (await import("./setup-vulkan.mjs")).setupVulkan()],
  ["--cluster", async () => (await import("./setup-cluster.mjs")).setupCluster()],
];
for (const [flag, step] of steps) {
  if (!process.argv.includes(flag)) continue;
  try {
    await step();
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
