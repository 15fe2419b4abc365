// The Vulkan adapter list from the real loader: what vulkaninfo reports on this machine, and the errors without a loader or a driver.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { INSTALL_DRIVER, isSoftwareAdapter, listVulkanAdapters } from "../../../src/native/vulkan-adapters.ts";

const MODULE = join(import.meta.dir, "..", "..", "..", "src", "native", "vulkan-adapters.ts");
const env = { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? "/tmp" };

/** The adapter list as a child process with `extra` in its environment sees it: the loader reads its variables at instance creation. */
function listInChild(extra: Record<string, string>) {
  const r = Bun.spawnSync([process.execPath, "-e", `import { listVulkanAdapters } from ${JSON.stringify(MODULE)}; console.log(JSON.stringify(listVulkanAdapters()));`], {
    env: { ...env, ...extra },
  });
  return { code: r.exitCode, result: JSON.parse(r.stdout.toString()) };
}

/** `field = value` lines of vulkaninfo's output, in order (one per device for per-device fields). */
function vulkaninfo(args: string[], field: string): string[] {
  const out = Bun.spawnSync(["vulkaninfo", ...args], { env }).stdout.toString();
  return [...out.matchAll(new RegExp(`^\\s*${field}\\s*=\\s*(.+?)\\s*$`, "gm"))].map((m) => m[1]!);
}

test("isSoftwareAdapter: a cpu-type adapter only", () => {
  expect(isSoftwareAdapter({ type: "cpu" })).toBe(true);
  for (const type of ["other", "integrated-gpu", "discrete-gpu", "virtual-gpu"] as const) expect(isSoftwareAdapter({ type })).toBe(false);
});

describe.skipIf(!Bun.which("vulkaninfo"))("on this machine, the same adapters as vulkaninfo", () => {
  const { adapters, error } = listVulkanAdapters();

  test("names, ids, type, driver and API version match --summary", () => {
    expect(error).toBeUndefined();
    const summary = (field: string) => vulkaninfo(["--summary"], field);
    expect(adapters.map((a) => a.name)).toEqual(summary("deviceName"));
    expect(adapters.map((a) => `0x${a.vendorId.toString(16)}`)).toEqual(summary("vendorID"));
    expect(adapters.map((a) => `0x${a.deviceId.toString(16).padStart(4, "0")}`)).toEqual(summary("deviceID"));
    expect(adapters.map((a) => `PHYSICAL_DEVICE_TYPE_${a.type.replace("-", "_").toUpperCase()}`)).toEqual(summary("deviceType"));
    expect(adapters.map((a) => a.driverName)).toEqual(summary("driverName"));
    expect(adapters.map((a) => a.driverInfo)).toEqual(summary("driverInfo"));
    expect(adapters.map((a) => a.apiVersion)).toEqual(summary("apiVersion"));
  });

  test("limits and the device-local heap match the full report", () => {
    expect(adapters.map((a) => String(a.maxStorageBufferRange))).toEqual(vulkaninfo([], "maxStorageBufferRange"));
    expect(adapters.map((a) => String(a.maxComputeWorkGroupInvocations))).toEqual(vulkaninfo([], "maxComputeWorkGroupInvocations"));
    // Heap sizes print as "25276510208 (0x5e298f000) (23.54 GiB)": every heap of every device, so ours is among them.
    const heaps = vulkaninfo([], "size").map((s) => Number(s.split(" ")[0]));
    for (const a of adapters) expect(heaps).toContain(a.deviceLocalBytes);
  });

  test("this project's machines have Mesa's llvmpipe, a software adapter", () => {
    const lavapipe = adapters.find((a) => a.driverName === "llvmpipe");
    expect(lavapipe).toMatchObject({ vendorName: "Mesa (software)", type: "cpu" });
    expect(isSoftwareAdapter(lavapipe!)).toBe(true);
    expect(lavapipe!.deviceLocalBytes).toBeGreaterThan(2 ** 30);
  });
});

describe("without a loader or a driver: an error saying what to install, no exception", () => {
  test("no loader library", () => {
    expect(listVulkanAdapters("libvulkan-missing.so.1")).toEqual({ adapters: [], error: `libvulkan-missing.so.1 not found: ${INSTALL_DRIVER}` });
    expect(INSTALL_DRIVER).toBe("install a Vulkan driver (Debian: mesa-vulkan-drivers for a software one, or the GPU vendor's)");
  });

  test("a loader that finds no driver (VK_ICD_FILENAMES / VK_DRIVER_FILES pointing nowhere)", () => {
    const { code, result } = listInChild({ VK_ICD_FILENAMES: "/nonexistent", VK_DRIVER_FILES: "/nonexistent" });
    expect(code).toBe(0);
    expect(result).toEqual({ adapters: [], error: "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER (the loader found no Vulkan driver)" });
  });
});
