// Shared by the set-up steps that install Debian packages (setup-browser.mjs, setup-vulkan.mjs): who may run apt-get, and running it quietly.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

export function onPath(name) {
  return (process.env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, name)));
}

/** Who is running set-up, as the plan functions take it: pure plans are then tested without a package manager. */
export function machineAccess() {
  return { isRoot: process.getuid?.() === 0, hasSudo: onPath("sudo"), hasAptGet: onPath("apt-get") };
}

/** What goes before a privileged command: nothing as root, sudo otherwise, null when neither can run it. */
export function privilegePrefix({ isRoot, hasSudo }) {
  // sudo drops the environment by default, so the noninteractive frontend goes through env.
  return isRoot ? [] : hasSudo ? ["sudo", "env", "DEBIAN_FRONTEND=noninteractive"] : null;
}

export function lastLine(text) {
  return text.split("\n").map((l) => l.trim()).filter(Boolean).at(-1);
}

/** Runs `[cmd, ...args]` with `input` on stdin; output is kept, not shown, so set-up stays short when it works and prints the tail when it does not. */
export function runQuiet([cmd, ...args], input) {
  const r = spawnSync(cmd, args, {
    encoding: "utf8",
    input,
    stdio: [input === undefined ? "inherit" : "pipe", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return { ok: r.status === 0, tail: r.error?.message ?? lastLine(`${r.stdout}\n${r.stderr}`) ?? `exit ${r.status}` };
}

export function seconds(startedMs) {
  return `${((performance.now() - startedMs) / 1000).toFixed(1)} s`;
}
