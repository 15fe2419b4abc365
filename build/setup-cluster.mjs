// The cluster step of set-up (`node build/setup.mjs --cluster`): installs Debian's redis-server, postgresql and haproxy for the several-replica tests when their binaries are missing.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { delimiter, join } from "node:path";
import { machineAccess, privilegePrefix, runSteps, seconds, updateStep } from "./apt.mjs";

/** Each server the cluster tests start, its Debian package, and where Debian puts its binary (postgres is not on PATH). */
export const SERVERS = [
  { binary: "redis-server", pkg: "redis-server", dirs: ["/usr/bin"], version: ["--version"] },
  { binary: "postgres", pkg: "postgresql", dirs: ["/usr/lib/postgresql/*/bin"], version: ["--version"] },
  { binary: "haproxy", pkg: "haproxy", dirs: ["/usr/sbin"], version: ["-v"] },
];
const INSTALL = ["apt-get", "install", "-y", "-q", "--no-install-recommends"];
export const MANUAL = `apt-get update && apt-get install -y --no-install-recommends ${SERVERS.map((s) => s.pkg).join(" ")}`;

/** Expands a directory pattern with one `*` segment into the directories that exist, sorted with numbers in order (so the newest PostgreSQL is last). */
export function expandDir(pattern, list = (dir) => (existsSync(dir) ? readdirSync(dir) : [])) {
  const star = pattern.indexOf("*");
  if (star < 0) return [pattern];
  const parent = pattern.slice(0, star).replace(/\/$/, "");
  const names = [...list(parent)].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  return names.map((name) => `${parent}/${name}${pattern.slice(star + 1)}`);
}

/** Where a server's binary is (PATH first, then Debian's directories), or null. */
export function findBinary({ binary, dirs }, pathEnv = process.env.PATH ?? "", exists = existsSync) {
  const candidates = [...pathEnv.split(delimiter).filter(Boolean), ...dirs.flatMap((d) => expandDir(d)).reverse()];
  for (const dir of candidates) if (exists(join(dir, binary))) return join(dir, binary);
  return null;
}

/**
 * What to run for a machine's state, as steps (the lists refreshed first: stale ones name files that are gone), or the
 * one line to fail with: pure, so the decisions are tested without a package manager. `missing` lists the packages
 * whose binaries were not found; all go in one apt-get call.
 */
export function clusterPlan({ missing, isRoot, hasSudo, hasAptGet }) {
  if (missing.length === 0) return { ready: true };
  const need = `kiln setup: the cluster tests need ${missing.join(", ")}`;
  if (!hasAptGet) return { fail: `${need}; this machine has no apt-get, so install ${missing.length > 1 ? "them" : "it"} yourself` };
  const prefix = privilegePrefix({ isRoot, hasSudo });
  if (!prefix) return { fail: `${need}; run as root: ${MANUAL}` };
  return { steps: [updateStep(prefix), { what: `apt-get install ${missing.join(" ")}`, argv: [...prefix, ...INSTALL, ...missing] }] };
}

function versionOf(path, args) {
  const r = spawnSync(path, args, { encoding: "utf8", timeout: 30_000 });
  return r.status === 0 ? (r.stdout ?? "").split("\n")[0].trim() : null;
}

/** Quiet when all three binaries are there; otherwise installs the missing ones or throws an Error whose message is one line to print. */
export function setupCluster() {
  const missingNow = () => SERVERS.filter((s) => !findBinary(s)).map((s) => s.pkg);
  const missing = missingNow();
  const plan = clusterPlan({ missing, ...machineAccess() });
  if (plan.ready) return;
  if (plan.fail) throw new Error(plan.fail);
  console.log(`kiln setup: installing Debian's ${missing.join(", ")} for the cluster tests`);
  const started = performance.now();
  const failed = runSteps(plan.steps);
  if (failed) throw new Error(`kiln setup: ${failed.what} failed (${failed.tail}); run as root: ${MANUAL}`);
  const still = missingNow();
  if (still.length) throw new Error(`kiln setup: apt-get ran but ${still.join(", ")} still has no binary; run as root: ${MANUAL}`);
  const versions = SERVERS.filter((s) => missing.includes(s.pkg)).map((s) => versionOf(findBinary(s), s.version) ?? s.binary);
  console.log(`kiln setup: ${versions.join("; ")} ready in ${seconds(started)}`);
}
