// The Vulkan structs kiln writes and reads through bun:ffi, as pure functions over DataViews (64-bit Linux layout), so byte fixtures test them.

/** VkStructureType values of the structs used here. */
export const STYPE = {
  applicationInfo: 0,
  instanceCreateInfo: 1,
  physicalDeviceProperties2: 1000059001,
  physicalDeviceDriverProperties: 1000196000,
} as const;

/** Byte sizes: pointers are 8 bytes, and a struct holding a VkDeviceSize (uint64) or pointer is padded to 8. */
export const SIZE = {
  applicationInfo: 48,
  instanceCreateInfo: 64,
  // VkPhysicalDeviceProperties is 824: 296 bytes of header, 504 of limits, 20 of sparse properties, 4 of padding.
  physicalDeviceProperties: 824,
  physicalDeviceProperties2: 16 + 824,
  driverProperties: 536,
  memoryProperties: 520,
} as const;

// VkPhysicalDeviceProperties: apiVersion 0, driverVersion 4, vendorID 8, deviceID 12, deviceType 16,
// deviceName[256] 20, pipelineCacheUUID[16] 276, then VkPhysicalDeviceLimits at 296 (292 rounded up to 8).
const PROPS = { apiVersion: 0, vendorId: 8, deviceId: 12, deviceType: 16, deviceName: 20, limits: 296 } as const;
// Inside VkPhysicalDeviceLimits: 11 uint32 (0..40), padding at 44, bufferImageGranularity and sparseAddressSpaceSize
// (VkDeviceSize) at 48 and 56, then uint32s from 64 (maxComputeWorkGroupCount[3] at 220). Checked against vulkaninfo
// on lavapipe, with these and other limits up to the last one, nonCoherentAtomSize (VkDeviceSize) at 496.
export const LIMIT_OFFSETS = { maxStorageBufferRange: 28, maxComputeWorkGroupInvocations: 232 } as const;
const DRIVER = { driverName: 20, driverInfo: 276, nameBytes: 256 } as const;
// VkPhysicalDeviceMemoryProperties: memoryTypeCount 0, memoryTypes[32] of 8 bytes at 4, memoryHeapCount 260,
// memoryHeaps[16] at 264, each { VkDeviceSize size; VkMemoryHeapFlags flags; } padded to 16.
const MEMORY = { heapCount: 260, heaps: 264, heapStride: 16, maxHeaps: 16 } as const;
const MEMORY_HEAP_DEVICE_LOCAL_BIT = 1;

export type AdapterType = "other" | "integrated-gpu" | "discrete-gpu" | "virtual-gpu" | "cpu";
// VkPhysicalDeviceType 0..4, in this order.
const DEVICE_TYPES: AdapterType[] = ["other", "integrated-gpu", "discrete-gpu", "virtual-gpu", "cpu"];

export interface DeviceProperties {
  /** Packed VK_MAKE_API_VERSION value. */
  apiVersion: number;
  vendorId: number;
  deviceId: number;
  type: AdapterType;
  name: string;
  maxStorageBufferRange: number;
  maxComputeWorkGroupInvocations: number;
}

export interface MemoryHeap {
  bytes: number;
  deviceLocal: boolean;
}

/** VK_MAKE_API_VERSION(0, major, minor, patch). */
export function makeApiVersion(major: number, minor: number, patch: number): number {
  return ((major << 22) | (minor << 12) | patch) >>> 0;
}

/** "major.minor.patch"; the variant (top 3 bits) is 0 for Vulkan and left out. */
export function formatApiVersion(v: number): string {
  return `${(v >>> 22) & 0x7f}.${(v >>> 12) & 0x3ff}.${v & 0xfff}`;
}

/** A NUL-terminated UTF-8 string in a fixed char[] field (a full field without a NUL is read to its end). */
export function readCString(view: DataView, offset: number, maxBytes: number): string {
  const bytes = new Uint8Array(view.buffer, view.byteOffset + offset, maxBytes);
  const end = bytes.indexOf(0);
  return new TextDecoder().decode(bytes.subarray(0, end < 0 ? maxBytes : end));
}

/** VkApplicationInfo with no names, asking for `apiVersion`. */
export function writeApplicationInfo(view: DataView, apiVersion: number): void {
  view.setUint32(0, STYPE.applicationInfo, true);
  view.setUint32(44, apiVersion, true);
}

/** VkInstanceCreateInfo with no layers and no extensions, pointing at an application info. */
export function writeInstanceCreateInfo(view: DataView, applicationInfoAddress: number): void {
  view.setUint32(0, STYPE.instanceCreateInfo, true);
  view.setBigUint64(24, BigInt(applicationInfoAddress), true);
}

/** VkPhysicalDeviceProperties2 chained to a VkPhysicalDeviceDriverProperties, whose sType is set too. */
export function writePropertiesChain(properties2: DataView, driverProperties: DataView, driverPropertiesAddress: number): void {
  properties2.setUint32(0, STYPE.physicalDeviceProperties2, true);
  properties2.setBigUint64(8, BigInt(driverPropertiesAddress), true);
  driverProperties.setUint32(0, STYPE.physicalDeviceDriverProperties, true);
}

/** Reads a VkPhysicalDeviceProperties starting at `offset` (16 inside a VkPhysicalDeviceProperties2). */
export function readDeviceProperties(view: DataView, offset = 0): DeviceProperties {
  const u32 = (at: number) => view.getUint32(offset + at, true);
  const typeCode = u32(PROPS.deviceType);
  return {
    apiVersion: u32(PROPS.apiVersion),
    vendorId: u32(PROPS.vendorId),
    deviceId: u32(PROPS.deviceId),
    type: DEVICE_TYPES[typeCode] ?? "other",
    name: readCString(view, offset + PROPS.deviceName, 256),
    maxStorageBufferRange: u32(PROPS.limits + LIMIT_OFFSETS.maxStorageBufferRange),
    maxComputeWorkGroupInvocations: u32(PROPS.limits + LIMIT_OFFSETS.maxComputeWorkGroupInvocations),
  };
}

/** driverName and driverInfo of a VkPhysicalDeviceDriverProperties; empty when the driver did not fill it in. */
export function readDriverProperties(view: DataView): { driverName: string; driverInfo: string } {
  return {
    driverName: readCString(view, DRIVER.driverName, DRIVER.nameBytes),
    driverInfo: readCString(view, DRIVER.driverInfo, DRIVER.nameBytes),
  };
}

export function readMemoryHeaps(view: DataView): MemoryHeap[] {
  const count = Math.min(view.getUint32(MEMORY.heapCount, true), MEMORY.maxHeaps);
  return Array.from({ length: count }, (_, i) => {
    const at = MEMORY.heaps + i * MEMORY.heapStride;
    return { bytes: Number(view.getBigUint64(at, true)), deviceLocal: (view.getUint32(at + 8, true) & MEMORY_HEAP_DEVICE_LOCAL_BIT) !== 0 };
  });
}

/** The largest device-local heap in bytes: what a model's weights can use on this adapter (0 when none). */
export function largestDeviceLocalHeap(heaps: MemoryHeap[]): number {
  return Math.max(0, ...heaps.filter((h) => h.deviceLocal).map((h) => h.bytes));
}

const RESULTS: Record<number, string> = {
  0: "VK_SUCCESS",
  5: "VK_INCOMPLETE",
  [-1]: "VK_ERROR_OUT_OF_HOST_MEMORY",
  [-2]: "VK_ERROR_OUT_OF_DEVICE_MEMORY",
  [-3]: "VK_ERROR_INITIALIZATION_FAILED",
  [-6]: "VK_ERROR_LAYER_NOT_PRESENT",
  [-7]: "VK_ERROR_EXTENSION_NOT_PRESENT",
  [-9]: "VK_ERROR_INCOMPATIBLE_DRIVER",
  [-13]: "VK_ERROR_UNKNOWN",
};

/** The VkResult's name for the codes instance creation and enumeration return. */
export function vkResultName(code: number): string {
  return RESULTS[code] ?? `VkResult ${code}`;
}

// PCI vendor ids, and the Khronos-assigned ids (0x10000+) of vendors without one.
const VENDORS: Record<number, string> = {
  0x1002: "AMD",
  0x1010: "Imagination",
  0x106b: "Apple",
  0x10de: "NVIDIA",
  0x13b5: "ARM",
  0x14e4: "Broadcom",
  0x1ae0: "Google",
  0x5143: "Qualcomm",
  0x8086: "Intel",
  0x10001: "Vivante",
  0x10002: "VeriSilicon",
  0x10003: "Kazan",
  0x10004: "Codeplay",
  0x10005: "Mesa (software)",
  0x10006: "PoCL",
};

export function vendorName(vendorId: number): string | undefined {
  return VENDORS[vendorId];
}
