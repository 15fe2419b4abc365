// The browser step of set-up (`node build/setup.mjs --browser`): installs Debian's Chromium for test/browser/ when it is missing or broken.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { lastLine, machineAccess, privilegePrefix, runQuiet, seconds } from "./apt.mjs";

export const CHROMIUM = "/usr/bin/chromium";
// Recommends (chromium-sandbox, udev, upower, mesa, cups helpers, fonts-liberation) are not needed headless with
// --no-sandbox --disable-gpu; text still renders because libfontconfig1 depends on a font (fonts-dejavu-core first).
const INSTALL = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"];
const UPDATE = ["apt-get", "update", "-q"];
export const MANUAL = `apt-get update && apt-get install -y --no-install-recommends chromium`;

/** Chromium's version line, or why it would not give one. */
export function probeChromium(path = CHROMIUM) {
  if (!existsSync(path)) return { ok: false, why: `${path} does not exist` };
  const r = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 30_000 });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`.trim();
  if (r.status === 0 && /chromium/i.test(r.stdout ?? "")) return { ok: true, version: r.stdout.trim() };
  return { ok: false, why: `${path} --version failed: ${r.error?.message ?? lastLine(out) ?? `exit ${r.status}`}` };
}

/**
 * What to run for a machine's state, as argument lists, or the one line to fail with: pure, so the decisions are
 * tested without a package manager. `broken` is true when the binary exists but does not run.
 */
export function browserPlan({ isRoot, hasSudo, hasAptGet, broken }) {
  const need = `kiln setup: the browser tests need Chromium at ${CHROMIUM}`;
  if (!hasAptGet) return { fail: `${need}; this machine has no apt-get, so install Chromium there yourself` };
  const prefix = privilegePrefix({ isRoot, hasSudo });
  if (!prefix) return { fail: `${need}; run as root: ${MANUAL}` };
  const install = [...prefix, ...INSTALL];
  if (broken) install.splice(install.length - 1, 0, "--reinstall");
  return { install, update: [...prefix, ...UPDATE] };
}

/** Quiet when Chromium already runs; otherwise installs it or throws an Error whose message is one line to print. */
export function setupBrowser() {
  const before = probeChromium();
  if (before.ok) return;
  const plan = browserPlan({ ...machineAccess(), broken: existsSync(CHROMIUM) });
  if (plan.fail) throw new Error(plan.fail);
  console.log(`kiln setup: installing Debian's chromium for the browser tests (${before.why})`);
  const started = performance.now();
  let result = runQuiet(plan.install);
  // A fresh machine has no package lists ("Unable to locate package"), and stale lists name files that are gone.
  if (!result.ok) {
    const updated = runQuiet(plan.update);
    result = updated.ok ? runQuiet(plan.install) : updated;
  }
  if (!result.ok) throw new Error(`kiln setup: apt-get could not install chromium (${result.tail}); run as root: ${MANUAL}`);
  const after = probeChromium();
  if (!after.ok) throw new Error(`kiln setup: chromium installed but ${after.why}; run as root: ${MANUAL}`);
  console.log(`kiln setup: ${after.version} ready in ${seconds(started)}`);
}
