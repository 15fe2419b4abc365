// build/setup-cluster.mjs decides what to install from the binaries it finds; the decisions are checked here without apt.
import { describe, expect, test } from "bun:test";
import { clusterPlan, expandDir, findBinary, MANUAL, SERVERS } from "../../build/setup-cluster.mjs";

const INSTALL = ["apt-get", "install", "-y", "-q", "--no-install-recommends"];
const ALL = ["redis-server", "postgresql", "haproxy"];

describe("clusterPlan", () => {
  test("nothing missing: ready, no apt at all", () => {
    expect(clusterPlan({ missing: [], isRoot: false, hasSudo: false, hasAptGet: false })).toEqual({ ready: true });
  });

  test("as root: the lists refreshed first, then one apt-get call naming every missing package", () => {
    expect(clusterPlan({ missing: ALL, isRoot: true, hasSudo: false, hasAptGet: true }).steps?.map((s) => s.argv)).toEqual([
      ["apt-get", "update", "-q"],
      [...INSTALL, ...ALL],
    ]);
    expect(clusterPlan({ missing: ["haproxy"], isRoot: true, hasSudo: false, hasAptGet: true }).steps?.[1]?.argv).toEqual([...INSTALL, "haproxy"]);
  });

  test("not root, with sudo: through sudo env, as the other set-up steps do", () => {
    const plan = clusterPlan({ missing: ["redis-server"], isRoot: false, hasSudo: true, hasAptGet: true });
    expect(plan.steps?.[1]?.argv).toEqual(["sudo", "env", "DEBIAN_FRONTEND=noninteractive", ...INSTALL, "redis-server"]);
  });

  test("cannot: one line saying what is missing and what to run", () => {
    const noSudo = clusterPlan({ missing: ["redis-server", "haproxy"], isRoot: false, hasSudo: false, hasAptGet: true });
    expect(noSudo).toEqual({ fail: `kiln setup: the cluster tests need redis-server, haproxy; run as root: ${MANUAL}` });
    const noApt = clusterPlan({ missing: ["postgresql"], isRoot: true, hasSudo: true, hasAptGet: false });
    expect(noApt.fail).toBe("kiln setup: the cluster tests need postgresql; this machine has no apt-get, so install it yourself");
  });
});

describe("finding the binaries", () => {
  test("postgres is found under Debian's versioned directory, the newest version first, when it is not on PATH", () => {
    const list = (dir: string) => (dir === "/usr/lib/postgresql" ? ["9.6", "15", "13"] : []);
    expect(expandDir("/usr/lib/postgresql/*/bin", list)).toEqual(["/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/13/bin", "/usr/lib/postgresql/15/bin"]);
    expect(expandDir("/usr/sbin")).toEqual(["/usr/sbin"]);
  });

  test("PATH comes first, then Debian's directories; null when neither has it", () => {
    const haproxy = SERVERS.find((s) => s.binary === "haproxy")!;
    const at = (...paths: string[]) => (p: string) => paths.includes(p);
    expect(findBinary(haproxy, "/opt/bin:/usr/bin", at("/opt/bin/haproxy", "/usr/sbin/haproxy"))).toBe("/opt/bin/haproxy");
    expect(findBinary(haproxy, "/usr/bin", at("/usr/sbin/haproxy"))).toBe("/usr/sbin/haproxy");
    expect(findBinary(haproxy, "/usr/bin", at())).toBeNull();
  });
});
