// build/setup-vulkan.mjs decides from os-release and dpkg-query's output whether to install Mesa from backports; checked here without apt.
import { describe, expect, test } from "bun:test";
import { ELSEWHERE, installedPackages, isBookworm, MANUAL, SOURCE_PATH, SOURCE_TEXT, upstreamMajor, vulkanPlan, type VulkanMachineState } from "../../build/setup-vulkan.mjs";

const BOOKWORM = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\nID=debian\n';
const TRIXIE = 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nVERSION_CODENAME=trixie\nID=debian\n';
const UBUNTU = 'NAME="Ubuntu"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\nUBUNTU_CODENAME=noble\n';
// What `dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n'` printed on this project's machines.
const MESA_25 = "libvulkan1 1.3.239.0-1 ii \nmesa-vulkan-drivers 25.0.7-2~bpo12+1 ii \n";
const MESA_22 = "libvulkan1 1.3.239.0-1 ii \nmesa-vulkan-drivers 22.3.6-1+deb12u1 ii \n";
const INSTALL = ["apt-get", "install", "-y", "-q", "-t", "bookworm-backports", "mesa-vulkan-drivers", "libvulkan1"];

const state = (over: Partial<VulkanMachineState>): VulkanMachineState => ({
  osRelease: BOOKWORM,
  dpkgOutput: "",
  sourceText: "",
  isRoot: true,
  hasSudo: false,
  hasAptGet: true,
  ...over,
});

describe("parsing", () => {
  test("installedPackages keeps only installed (ii) packages", () => {
    expect(installedPackages(MESA_25)).toEqual(new Map([["libvulkan1", "1.3.239.0-1"], ["mesa-vulkan-drivers", "25.0.7-2~bpo12+1"]]));
    expect(installedPackages("mesa-vulkan-drivers 25.0.7-2~bpo12+1 rc \nlibvulkan1 1.3.239.0-1 un \n")).toEqual(new Map());
    expect(installedPackages("")).toEqual(new Map());
  });

  test("upstreamMajor reads through epochs and Debian revisions", () => {
    expect(upstreamMajor("25.0.7-2~bpo12+1")).toBe(25);
    expect(upstreamMajor("22.3.6-1+deb12u1")).toBe(22);
    expect(upstreamMajor("1:24.2.8-1")).toBe(24);
    expect(upstreamMajor("garbage")).toBeNull();
  });

  test("isBookworm wants Debian itself at bookworm, quoted or not", () => {
    expect(isBookworm(BOOKWORM)).toBe(true);
    expect(isBookworm('ID="debian"\nVERSION_CODENAME="bookworm"\n')).toBe(true);
    expect(isBookworm(TRIXIE)).toBe(false);
    expect(isBookworm(UBUNTU)).toBe(false);
    expect(isBookworm("")).toBe(false);
  });
});

describe("vulkanPlan", () => {
  test("Mesa 25 and the loader installed: ready, nothing runs (this machine)", () => {
    const plan = vulkanPlan(state({ dpkgOutput: MESA_25, sourceText: SOURCE_TEXT, isRoot: false }));
    expect(plan).toEqual({ ready: "Mesa 25.0.7-2~bpo12+1 (mesa-vulkan-drivers) and libvulkan1 1.3.239.0-1" });
  });

  test("Debian 12's own Mesa 22 as root: writes the backports source, updates, installs from backports", () => {
    const plan = vulkanPlan(state({ dpkgOutput: MESA_22 }));
    expect(plan.why).toBe("mesa-vulkan-drivers is 22.3.6-1+deb12u1, Dawn needs ≥ 25");
    expect(plan.steps).toEqual([
      { what: `writing ${SOURCE_PATH}`, argv: ["tee", SOURCE_PATH], input: SOURCE_TEXT, sources: true },
      { what: "apt-get update", argv: ["apt-get", "update", "-q"], update: true },
      { what: "apt-get install", argv: INSTALL },
    ]);
  });

  test("the source is deb822 with the suite and the archive keyring", () => {
    expect(SOURCE_PATH).toBe("/etc/apt/sources.list.d/kiln-backports.sources");
    expect(SOURCE_TEXT).toBe(
      "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
    );
  });

  test("a source already in place is not rewritten; through sudo, env carries the noninteractive frontend", () => {
    const plan = vulkanPlan(state({ dpkgOutput: "", sourceText: SOURCE_TEXT, isRoot: false, hasSudo: true }));
    expect(plan.why).toBe("no Vulkan driver or loader installed");
    const sudo = ["sudo", "env", "DEBIAN_FRONTEND=noninteractive"];
    expect(plan.steps!.map((s) => s.argv)).toEqual([[...sudo, "apt-get", "update", "-q"], [...sudo, ...INSTALL]]);
  });

  test("a source with other text is rewritten", () => {
    const plan = vulkanPlan(state({ dpkgOutput: MESA_22, sourceText: SOURCE_TEXT.replace("main", "main contrib") }));
    expect(plan.steps![0]!.argv).toEqual(["tee", SOURCE_PATH]);
  });

  test("Mesa 25 without the loader, or a removed Mesa, still installs", () => {
    expect(vulkanPlan(state({ dpkgOutput: "mesa-vulkan-drivers 25.0.7-2~bpo12+1 ii \n" })).why).toBe("mesa-vulkan-drivers is 25.0.7-2~bpo12+1, Dawn needs ≥ 25");
    expect(vulkanPlan(state({ dpkgOutput: "libvulkan1 1.3.239.0-1 ii \nmesa-vulkan-drivers 25.0.7-2~bpo12+1 rc \n" })).why).toBe("mesa-vulkan-drivers is not installed");
  });

  test("not Debian 12: one line saying what is needed, no failure; unless Mesa 25 is already there", () => {
    for (const osRelease of [TRIXIE, UBUNTU, ""]) expect(vulkanPlan(state({ osRelease, dpkgOutput: MESA_22 }))).toEqual({ note: ELSEWHERE });
    expect(ELSEWHERE).toContain("a Vulkan driver");
    expect(ELSEWHERE).toContain("Mesa ≥ 24");
    expect(ELSEWHERE).not.toContain("\n");
    expect(vulkanPlan(state({ osRelease: TRIXIE, dpkgOutput: MESA_25 })).ready).toBeDefined();
  });

  test("cannot install: one line saying what to run", () => {
    const plan = vulkanPlan(state({ dpkgOutput: MESA_22, isRoot: false, hasSudo: false }));
    expect(plan).toEqual({ fail: `kiln setup: the webgpu tests need Mesa ≥ 25's software Vulkan driver (mesa-vulkan-drivers is 22.3.6-1+deb12u1, Dawn needs ≥ 25); run as root: ${MANUAL}` });
    expect(vulkanPlan(state({ hasAptGet: false })).fail).toMatch(/^kiln setup: .*no apt-get: put the bookworm-backports suite in/);
  });
});
