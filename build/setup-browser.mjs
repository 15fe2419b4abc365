// The browser step of set-up (`node build/setup.mjs --browser`): installs Debian's Chromium for test/browser/ when it is missing, broken or too old.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { lastLine, machineAccess, majorOf, privilegePrefix, runSteps, seconds, updateStep } from "./apt.mjs";

export const CHROMIUM = "/usr/bin/chromium";
// The oldest Chromium the browser tests were run on (150, from a stale Debian list, and 156): older ones are upgraded.
export const MIN_CHROMIUM_MAJOR = 150;
// Recommends (chromium-sandbox, udev, upower, mesa, cups helpers, fonts-liberation) are not needed headless with
// --no-sandbox --disable-gpu; text still renders because libfontconfig1 depends on a font (fonts-dejavu-core first).
const INSTALL = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"];
export const MANUAL = `apt-get update && apt-get install -y --no-install-recommends chromium`;

/** Chromium's version line and major, or why it would not give one. */
export function probeChromium(path = CHROMIUM) {
  if (!existsSync(path)) return { ok: false, why: `${path} does not exist` };
  const r = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 30_000 });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`.trim();
  if (r.status === 0 && /chromium/i.test(r.stdout ?? "")) {
    const version = lastLine(r.stdout);
    return { ok: true, version, major: majorOf(version) };
  }
  return { ok: false, why: `${path} --version failed: ${r.error?.message ?? lastLine(out) ?? `exit ${r.status}`}` };
}

/** Why the probed Chromium will not do, or null when it will. */
export function chromiumShortfall(probe) {
  if (!probe.ok) return probe.why;
  if (probe.major === null || probe.major < MIN_CHROMIUM_MAJOR) return `${probe.version} is older than ${MIN_CHROMIUM_MAJOR}`;
  return null;
}

/**
 * What to run for a machine's state, as steps (the lists refreshed first, then the install), or the one line to fail
 * with: pure, so the decisions are tested without a package manager. `broken` is true when the binary exists but does not run.
 */
export function browserPlan({ isRoot, hasSudo, hasAptGet, broken }) {
  const need = `kiln setup: the browser tests need Chromium ≥ ${MIN_CHROMIUM_MAJOR} at ${CHROMIUM}`;
  if (!hasAptGet) return { fail: `${need}; this machine has no apt-get, so install Chromium there yourself` };
  const prefix = privilegePrefix({ isRoot, hasSudo });
  if (!prefix) return { fail: `${need}; run as root: ${MANUAL}` };
  const install = [...prefix, ...INSTALL];
  if (broken) install.splice(install.length - 1, 0, "--reinstall");
  return { steps: [updateStep(prefix), { what: "apt-get install chromium", argv: install }] };
}

/** Quiet when a recent enough Chromium runs; otherwise installs or upgrades it, or throws an Error whose message is one line to print. */
export function setupBrowser() {
  const before = probeChromium();
  const why = chromiumShortfall(before);
  if (!why) return;
  const plan = browserPlan({ ...machineAccess(), broken: existsSync(CHROMIUM) && !before.ok });
  if (plan.fail) throw new Error(plan.fail);
  console.log(`kiln setup: installing Debian's chromium for the browser tests (${why})`);
  const started = performance.now();
  const failed = runSteps(plan.steps);
  if (failed) throw new Error(`kiln setup: ${failed.what} failed (${failed.tail}); run as root: ${MANUAL}`);
  const after = probeChromium();
  const still = chromiumShortfall(after);
  if (still) throw new Error(`kiln setup: chromium installed but ${still}; run as root: ${MANUAL}`);
  console.log(`kiln setup: ${after.version} ready in ${seconds(started)}`);
}
