// build/setup-browser.mjs decides what to run from the machine's state; the decisions are checked here without apt.
import { describe, expect, test } from "bun:test";
import { browserPlan, MANUAL, probeChromium } from "../../build/setup-browser.mjs";

const INSTALL = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"];

describe("browserPlan", () => {
  test("as root: apt-get directly, update kept for the retry", () => {
    expect(browserPlan({ isRoot: true, hasSudo: false, hasAptGet: true, broken: false })).toEqual({
      install: INSTALL,
      update: ["apt-get", "update", "-q"],
    });
  });

  test("not root, with sudo: through sudo, which would drop DEBIAN_FRONTEND, so env sets it again", () => {
    const plan = browserPlan({ isRoot: false, hasSudo: true, hasAptGet: true, broken: false });
    expect(plan.install).toEqual(["sudo", "env", "DEBIAN_FRONTEND=noninteractive", ...INSTALL]);
    expect(plan.update?.slice(0, 4)).toEqual(["sudo", "env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]);
  });

  test("a binary that exists but does not run is reinstalled", () => {
    expect(browserPlan({ isRoot: true, hasSudo: false, hasAptGet: true, broken: true }).install).toEqual([
      "apt-get", "install", "-y", "-q", "--no-install-recommends", "--reinstall", "chromium",
    ]);
  });

  test("cannot: one line saying what to run", () => {
    const noSudo = browserPlan({ isRoot: false, hasSudo: false, hasAptGet: true, broken: false });
    expect(noSudo).toEqual({ fail: `kiln setup: the browser tests need Chromium at /usr/bin/chromium; run as root: ${MANUAL}` });
    const noApt = browserPlan({ isRoot: true, hasSudo: true, hasAptGet: false, broken: false });
    expect(noApt.fail).toMatch(/^kiln setup: .*no apt-get, so install Chromium there yourself$/);
    expect(noApt.fail).not.toContain("\n");
  });
});

test("probeChromium names a missing binary", () => {
  expect(probeChromium("/nonexistent/chromium")).toEqual({ ok: false, why: "/nonexistent/chromium does not exist" });
});
