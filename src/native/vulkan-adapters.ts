// The machine's Vulkan adapters, read from the Vulkan loader with bun:ffi: ONNX Runtime's WebGPU provider tells nothing about the adapter it would use.
import { dlopen, FFIType, ptr } from "bun:ffi";
import {
  type AdapterType,
  formatApiVersion,
  largestDeviceLocalHeap,
  makeApiVersion,
  readDeviceProperties,
  readDriverProperties,
  readMemoryHeaps,
  SIZE,
  vendorName,
  vkResultName,
  writeApplicationInfo,
  writeInstanceCreateInfo,
  writePropertiesChain,
} from "./vulkan-structs.ts";

export interface VulkanAdapter {
  name: string;
  vendorId: number;
  /** Known vendors only ("NVIDIA", "Mesa (software)"...). */
  vendorName?: string;
  deviceId: number;
  type: AdapterType;
  driverName: string;
  driverInfo: string;
  /** "1.x.y": the highest Vulkan version the adapter supports. */
  apiVersion: string;
  /** The largest device-local heap: system RAM for a software adapter. */
  deviceLocalBytes: number;
  maxStorageBufferRange: number;
  maxComputeWorkGroupInvocations: number;
}

export interface VulkanAdapterList {
  adapters: VulkanAdapter[];
  /** Why no adapter could be listed; absent when the loader answered (even with none). */
  error?: string;
}

/** The fix inside the missing loader's error. */
export const INSTALL_DRIVER = "install a Vulkan driver (Debian: mesa-vulkan-drivers for a software one, or the GPU vendor's)";

/** A software adapter (Mesa's lavapipe, SwiftShader) runs WebGPU on the CPU, so it is no reason to leave kiln's CPU path. */
export function isSoftwareAdapter(a: Pick<VulkanAdapter, "type">): boolean {
  return a.type === "cpu";
}

// Handles (VkInstance, VkPhysicalDevice) are pointers passed as u64, so no address is squeezed through a double.
const SYMBOLS = {
  vkCreateInstance: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  vkEnumeratePhysicalDevices: { args: [FFIType.u64, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  vkGetPhysicalDeviceProperties2: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.void },
  vkGetPhysicalDeviceMemoryProperties: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.void },
  vkDestroyInstance: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.void },
} as const;

type Vulkan = ReturnType<typeof dlopen<typeof SYMBOLS>>["symbols"];

// Opened once and never closed: unloading the loader while a driver's threads may linger is not worth the risk.
const opened = new Map<string, { symbols: Vulkan } | { error: string }>();

function openLoader(library: string): { symbols: Vulkan } | { error: string } {
  let loader = opened.get(library);
  if (loader) return loader;
  try {
    loader = { symbols: dlopen(library, SYMBOLS).symbols };
  } catch (e) {
    const text = e instanceof Error ? e.message : String(e);
    // A loader older than Vulkan 1.1 opens but lacks vkGetPhysicalDeviceProperties2 (Bun: 'Symbol "…" not found in "…"').
    loader = { error: /^Symbol /.test(text) ? `${library} is older than Vulkan 1.1: ${text}` : `${library} not found: ${INSTALL_DRIVER}` };
  }
  opened.set(library, loader);
  return loader;
}

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

function describeDevice(vk: Vulkan, device: bigint): VulkanAdapter {
  const properties2 = new Uint8Array(SIZE.physicalDeviceProperties2);
  const driver = new Uint8Array(SIZE.driverProperties);
  // The spec has every layer and driver skip chained structs it does not know, so the driver chain is safe on any 1.1 device.
  writePropertiesChain(view(properties2), view(driver), ptr(driver));
  vk.vkGetPhysicalDeviceProperties2(device, ptr(properties2));
  const memory = new Uint8Array(SIZE.memoryProperties);
  vk.vkGetPhysicalDeviceMemoryProperties(device, ptr(memory));
  const p = readDeviceProperties(view(properties2), 16);
  const vendor = vendorName(p.vendorId);
  return {
    name: p.name,
    vendorId: p.vendorId,
    ...(vendor ? { vendorName: vendor } : {}),
    deviceId: p.deviceId,
    type: p.type,
    ...readDriverProperties(view(driver)),
    apiVersion: formatApiVersion(p.apiVersion),
    deviceLocalBytes: largestDeviceLocalHeap(readMemoryHeaps(view(memory))),
    maxStorageBufferRange: p.maxStorageBufferRange,
    maxComputeWorkGroupInvocations: p.maxComputeWorkGroupInvocations,
  };
}

function enumerate(vk: Vulkan, instance: bigint): VulkanAdapterList {
  const count = new Uint32Array(1);
  let rc = vk.vkEnumeratePhysicalDevices(instance, ptr(count), null);
  if (rc < 0) return { adapters: [], error: `vkEnumeratePhysicalDevices failed: ${vkResultName(rc)}` };
  if (count[0] === 0) return { adapters: [] };
  const devices = new BigUint64Array(count[0]!);
  rc = vk.vkEnumeratePhysicalDevices(instance, ptr(count), ptr(devices));
  // VK_INCOMPLETE (a device vanished between the calls) still fills in `count` devices.
  if (rc < 0) return { adapters: [], error: `vkEnumeratePhysicalDevices failed: ${vkResultName(rc)}` };
  return { adapters: [...devices.subarray(0, count[0])].map((d) => describeDevice(vk, d)) };
}

/**
 * Every Vulkan adapter the loader sees. Never throws: a missing loader, no driver or a failed call becomes
 * `error`. (A driver that crashes inside a call would still take the process down; none does that here.)
 * `library` is the loader's name, for tests of a machine without one.
 */
export function listVulkanAdapters(library = "libvulkan.so.1"): VulkanAdapterList {
  try {
    const loader = openLoader(library);
    if ("error" in loader) return { adapters: [], error: loader.error };
    const vk = loader.symbols;
    const app = new Uint8Array(SIZE.applicationInfo);
    writeApplicationInfo(view(app), makeApiVersion(1, 1, 0));
    const createInfo = new Uint8Array(SIZE.instanceCreateInfo);
    writeInstanceCreateInfo(view(createInfo), ptr(app));
    const out = new BigUint64Array(1);
    const rc = vk.vkCreateInstance(ptr(createInfo), null, ptr(out));
    if (rc !== 0) {
      const name = vkResultName(rc);
      return { adapters: [], error: `vkCreateInstance failed: ${name}${name === "VK_ERROR_INCOMPATIBLE_DRIVER" ? " (the loader found no Vulkan driver)" : ""}` };
    }
    const instance = out[0]!;
    try {
      return enumerate(vk, instance);
    } finally {
      vk.vkDestroyInstance(instance, null);
    }
  } catch (e) {
    return { adapters: [], error: `reading the Vulkan adapters failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}
