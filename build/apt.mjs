// Shared by the set-up steps that install Debian packages (setup-browser.mjs, setup-vulkan.mjs, setup-cluster.mjs):
// who may run apt-get, running it quietly, and refreshing the package lists once before anything is installed.
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

/** The update step every install plan starts with: a machine's lists may be missing or stale (they named an old Chromium). */
export function updateStep(prefix) {
  return { what: "apt-get update", argv: [...prefix, "apt-get", "update", "-q"], update: true };
}

/** The upstream major of a version string ("Chromium 156.0.8078.73 built on …" → 156, "1:9.2" → 9), or null. */
export function majorOf(version) {
  const m = /(?:^|[^\d.:])(?:\d+:)?(\d+)\.\d/.exec(` ${version}`);
  return m ? Number(m[1]) : null;
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

// One refresh serves every step of this set-up run, until a step changes the sources (the backports suite).
let listsFresh = false;

/** Runs a plan's steps in order; an update is skipped when this run already refreshed the same sources. Returns the failure or null. */
export function runSteps(steps, run = runQuiet) {
  // `sources: true` marks a step that writes an apt source: the next update must run even after an earlier one.
  for (const { what, argv, input, update, sources } of steps) {
    if (update && listsFresh) continue;
    const result = run(argv, input);
    if (!result.ok) return { what, tail: result.tail };
    if (update) listsFresh = true;
    if (sources) listsFresh = false;
  }
  return null;
}

export function seconds(startedMs) {
  return `${((performance.now() - startedMs) / 1000).toFixed(1)} s`;
}
