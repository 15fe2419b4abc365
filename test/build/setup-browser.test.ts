// build/setup-browser.mjs decides what to run from the machine's state; the decisions are checked here without apt.
import { describe, expect, test } from "bun:test";
import { majorOf, runSteps } from "../../build/apt.mjs";
import { browserPlan, chromiumShortfall, MANUAL, MIN_CHROMIUM_MAJOR, probeChromium } from "../../build/setup-browser.mjs";

const INSTALL = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"];
const UPDATE = ["apt-get", "update", "-q"];

describe("browserPlan", () => {
  test("as root: the lists refreshed first (stale ones offered an old Chromium), then the install", () => {
    const plan = browserPlan({ isRoot: true, hasSudo: false, hasAptGet: true, broken: false });
    expect(plan.steps?.map((s) => s.argv)).toEqual([UPDATE, INSTALL]);
    expect(plan.steps?.[0]?.update).toBe(true);
  });

  test("not root, with sudo: through sudo, which would drop DEBIAN_FRONTEND, so env sets it again", () => {
    const plan = browserPlan({ isRoot: false, hasSudo: true, hasAptGet: true, broken: false });
    const sudo = ["sudo", "env", "DEBIAN_FRONTEND=noninteractive"];
    expect(plan.steps?.map((s) => s.argv)).toEqual([[...sudo, ...UPDATE], [...sudo, ...INSTALL]]);
  });

  test("a binary that exists but does not run is reinstalled", () => {
    expect(browserPlan({ isRoot: true, hasSudo: false, hasAptGet: true, broken: true }).steps?.[1]?.argv).toEqual([
      "apt-get", "install", "-y", "-q", "--no-install-recommends", "--reinstall", "chromium",
    ]);
  });

  test("cannot: one line saying what to run", () => {
    const noSudo = browserPlan({ isRoot: false, hasSudo: false, hasAptGet: true, broken: false });
    expect(noSudo).toEqual({ fail: `kiln setup: the browser tests need Chromium ≥ ${MIN_CHROMIUM_MAJOR} at /usr/bin/chromium; run as root: ${MANUAL}` });
    const noApt = browserPlan({ isRoot: true, hasSudo: true, hasAptGet: false, broken: false });
    expect(noApt.fail).toMatch(/^kiln setup: .*no apt-get, so install Chromium there yourself$/);
    expect(noApt.fail).not.toContain("\n");
  });
});

test("probeChromium names a missing binary", () => {
  expect(probeChromium("/nonexistent/chromium")).toEqual({ ok: false, why: "/nonexistent/chromium does not exist" });
});

describe("which Chromium will do", () => {
  test("its major is read from the version line, and one older than the minimum is upgraded", () => {
    expect(majorOf("Chromium 150.0.7871.100 built on Debian GNU/Linux 12 (bookworm)")).toBe(150);
    const old = { ok: true as const, version: "Chromium 120.0.6099.224 built on Debian", major: 120 };
    expect(chromiumShortfall(old)).toBe(`Chromium 120.0.6099.224 built on Debian is older than ${MIN_CHROMIUM_MAJOR}`);
    expect(chromiumShortfall({ ok: true, version: "Chromium 156.0.8078.73", major: 156 })).toBeNull();
    expect(chromiumShortfall({ ok: false, why: "/usr/bin/chromium does not exist" })).toBe("/usr/bin/chromium does not exist");
  });
});

describe("running the steps", () => {
  test("a failed update stops before the install, and says which step failed", () => {
    const ran: string[][] = [];
    const failed = runSteps(browserPlan({ isRoot: true, hasSudo: false, hasAptGet: true, broken: false }).steps!, (argv) => {
      ran.push(argv);
      return { ok: false, tail: "Temporary failure resolving" };
    });
    expect(ran).toEqual([UPDATE]);
    expect(failed).toEqual({ what: "apt-get update", tail: "Temporary failure resolving" });
  });

  test("one refresh serves the later steps of the same run, until a step writes a source", () => {
    const ran: string[] = [];
    const run = (argv: string[]) => (ran.push(argv.join(" ")), { ok: true, tail: "" });
    const update = { what: "apt-get update", argv: UPDATE, update: true };
    expect(runSteps([update, { what: "install a", argv: ["install", "a"] }], run)).toBeNull();
    expect(runSteps([update, { what: "install b", argv: ["install", "b"] }], run)).toBeNull();
    expect(runSteps([{ what: "tee", argv: ["tee", "x"], input: "deb …", sources: true }, update, { what: "install c", argv: ["install", "c"] }], run)).toBeNull();
    expect(ran).toEqual(["apt-get update -q", "install a", "install b", "tee x", "apt-get update -q", "install c"]);
  });
});
