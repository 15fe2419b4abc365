// The WebGPU step of set-up (`node build/setup.mjs --webgpu`): on Debian 12, installs Mesa's software Vulkan driver (lavapipe) from bookworm-backports.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { machineAccess, privilegePrefix, runSteps, seconds, updateStep } from "./apt.mjs";

export const SOURCE_PATH = "/etc/apt/sources.list.d/kiln-backports.sources";
export const SOURCE_TEXT = [
  "Types: deb",
  "URIs: http://deb.debian.org/debian",
  "Suites: bookworm-backports",
  "Components: main",
  "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
  "",
].join("\n");
// Dawn refuses Debian 12's own Mesa 22.3 lavapipe ("No supported adapters"); 25 from backports works.
export const MIN_MESA_MAJOR = 25;
const PACKAGES = ["mesa-vulkan-drivers", "libvulkan1"];
// With -t the backports suite wins for the dependencies too (Mesa 25 needs libdrm from backports).
const INSTALL = ["apt-get", "install", "-y", "-q", "-t", "bookworm-backports", ...PACKAGES];
export const MANUAL = `put the bookworm-backports suite in ${SOURCE_PATH}, then apt-get update && apt-get install -y -t bookworm-backports ${PACKAGES.join(" ")}`;
export const ELSEWHERE =
  "kiln setup: WebGPU needs a Vulkan driver (the GPU vendor's, or Mesa ≥ 24's mesa-vulkan-drivers for a software one); set-up installs one only on Debian 12, so install it yourself for the webgpu tests";

/** `dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n'` output → package → version, for installed packages only. */
export function installedPackages(dpkgOutput) {
  const installed = new Map();
  for (const line of dpkgOutput.split("\n")) {
    const [name, version, status] = line.trim().split(/\s+/);
    // "ii" is installed; "rc" (removed, config kept) and "un" also appear in the database and are not.
    if (name && version && status === "ii") installed.set(name, version);
  }
  return installed;
}

/** The upstream major of a Debian version ("25.0.7-2~bpo12+1" → 25, "1:9.2" → 9), or null. */
export function upstreamMajor(version) {
  const m = /^(?:\d+:)?(\d+)\./.exec(version);
  return m ? Number(m[1]) : null;
}

export function isBookworm(osRelease) {
  const field = (key) => new RegExp(`^${key}="?([^"\\n]*)"?$`, "m").exec(osRelease)?.[1];
  return field("ID") === "debian" && field("VERSION_CODENAME") === "bookworm";
}

/**
 * What to do for a machine's state; pure, so every branch is tested without apt. Returns `ready` (nothing to do),
 * `note` (one line to print, then carry on: not Debian 12), `fail` (one line; cannot install) or `steps` to run in order,
 * each a label, an argument list and optional stdin.
 */
export function vulkanPlan({ osRelease, dpkgOutput, sourceText, isRoot, hasSudo, hasAptGet }) {
  const installed = installedPackages(dpkgOutput);
  const mesa = installed.get("mesa-vulkan-drivers");
  const mesaMajor = mesa ? upstreamMajor(mesa) : null;
  if (mesaMajor !== null && mesaMajor >= MIN_MESA_MAJOR && installed.has("libvulkan1")) return { ready: `Mesa ${mesa} (mesa-vulkan-drivers) and libvulkan1 ${installed.get("libvulkan1")}` };
  if (!isBookworm(osRelease)) return { note: ELSEWHERE };
  const why = mesa ? `mesa-vulkan-drivers is ${mesa}, Dawn needs ≥ ${MIN_MESA_MAJOR}` : installed.has("libvulkan1") ? "mesa-vulkan-drivers is not installed" : "no Vulkan driver or loader installed";
  const need = `kiln setup: the webgpu tests need Mesa ≥ ${MIN_MESA_MAJOR}'s software Vulkan driver (${why})`;
  if (!hasAptGet) return { fail: `${need}; this machine has no apt-get: ${MANUAL}` };
  const prefix = privilegePrefix({ isRoot, hasSudo });
  if (!prefix) return { fail: `${need}; run as root: ${MANUAL}` };
  const steps = [];
  // tee, not a write from Node: as a sudo user only the privileged child may write under /etc.
  if (sourceText !== SOURCE_TEXT) steps.push({ what: `writing ${SOURCE_PATH}`, argv: [...prefix, "tee", SOURCE_PATH], input: SOURCE_TEXT, sources: true });
  // Always update first (once a set-up run): the backports suite may be new, and a fresh image has stale lists or none.
  steps.push(updateStep(prefix), { what: "apt-get install", argv: [...prefix, ...INSTALL] });
  return { why, steps };
}

function dpkgQuery() {
  const r = spawnSync("dpkg-query", ["-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\\n", ...PACKAGES], { encoding: "utf8" });
  // Exit 1 only says one of the packages is unknown to dpkg; stdout still lists the others.
  return r.stdout ?? "";
}

function readOrEmpty(path) {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/** Quiet when Mesa ≥ 25 is installed; prints one line elsewhere than Debian 12; otherwise installs it or throws an Error whose message is one line to print. */
export function setupVulkan() {
  const state = () => ({ osRelease: readOrEmpty("/etc/os-release"), dpkgOutput: dpkgQuery(), sourceText: readOrEmpty(SOURCE_PATH), ...machineAccess() });
  const plan = vulkanPlan(state());
  if (plan.ready) return;
  if (plan.note) return void console.log(plan.note);
  if (plan.fail) throw new Error(plan.fail);
  console.log(`kiln setup: installing Mesa's software Vulkan driver from bookworm-backports for the webgpu tests (${plan.why})`);
  const started = performance.now();
  const failed = runSteps(plan.steps);
  if (failed) throw new Error(`kiln setup: ${failed.what} failed (${failed.tail}); as root: ${MANUAL}`);
  const after = vulkanPlan(state());
  if (!after.ready) throw new Error(`kiln setup: apt-get ran but ${after.why ?? after.fail ?? after.note}; as root: ${MANUAL}`);
  console.log(`kiln setup: ${after.ready} ready in ${seconds(started)}`);
}
