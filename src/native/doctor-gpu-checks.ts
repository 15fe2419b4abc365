// The adapters row of `kiln doctor`: the Vulkan adapters WebGPU can use, one line each, and how to get one when there is none.
import { runCheck, type CheckResult } from "./doctor-checks.ts";
import { isSoftwareAdapter, listVulkanAdapters, type VulkanAdapter, type VulkanAdapterList } from "./vulkan-adapters.ts";

export const ADAPTERS_FIX =
  "kiln runs on the CPU without one; for WebGPU install a Vulkan driver: the GPU vendor's, or on Debian 12 Mesa ≥ 25's software one (mesa-vulkan-drivers from bookworm-backports; `node build/setup.mjs --webgpu` does it).";
export const SOFTWARE_NOTE = "software adapter: WebGPU works but runs on the CPU; kiln's auto device keeps the CPU";

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** One adapter as one line: name, vendor, type, backend, driver, API version, memory and the storage buffer limit. */
export function formatAdapter(a: VulkanAdapter): string {
  const vendor = a.vendorName ?? `0x${a.vendorId.toString(16)}`;
  const driver = [a.driverName, a.driverInfo].filter(Boolean).join(": ") || "not reported";
  const line =
    `${a.name}: vendor ${vendor}, type ${a.type}, backend vulkan, driver ${driver}, API ${a.apiVersion}, ` +
    `${(a.deviceLocalBytes / GIB).toFixed(1)} GiB device-local, max storage buffer ${Math.floor(a.maxStorageBufferRange / MIB)} MiB`;
  return isSoftwareAdapter(a) ? `${line}; ${SOFTWARE_NOTE}` : line;
}

/** The adapters row (never required: a CPU-only box serves fine), with the per-adapter lines shown under the table. */
export function adaptersResult(list: VulkanAdapterList): Omit<CheckResult, "name" | "required"> {
  if (!list.adapters.length) return { status: "warn", detail: list.error ?? "the Vulkan loader lists no adapter", fix: ADAPTERS_FIX };
  const names = list.adapters.map((a) => `${a.name}${isSoftwareAdapter(a) ? " (software)" : ""}`);
  const count = `${list.adapters.length} Vulkan adapter${list.adapters.length === 1 ? "" : "s"}`;
  return { status: "ok", detail: `${count}: ${names.join(", ")}`, lines: list.adapters.map(formatAdapter) };
}

export function checkAdapters(list: () => VulkanAdapterList = listVulkanAdapters): Promise<CheckResult> {
  return runCheck("adapters", false, ADAPTERS_FIX, async () => adaptersResult(list()));
}
