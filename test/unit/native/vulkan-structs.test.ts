// The Vulkan struct codecs on byte fixtures built here from the spec's C layout, so no driver is needed.
import { describe, expect, test } from "bun:test";
import {
  formatApiVersion,
  largestDeviceLocalHeap,
  LIMIT_OFFSETS,
  makeApiVersion,
  readCString,
  readDeviceProperties,
  readDriverProperties,
  readMemoryHeaps,
  SIZE,
  STYPE,
  vendorName,
  vkResultName,
  writeApplicationInfo,
  writeInstanceCreateInfo,
  writePropertiesChain,
} from "../../../src/native/vulkan-structs.ts";

const dv = (bytes: number) => new DataView(new ArrayBuffer(bytes));
const putString = (view: DataView, offset: number, text: string) => new Uint8Array(view.buffer).set(new TextEncoder().encode(text), offset);

/** C offsets of a struct's members in order: each aligned to its own size (all members here are 4 or 8 bytes). */
function cOffsets(members: [name: string, bytes: 4 | 8, count?: number][]): Record<string, number> {
  const out: Record<string, number> = {};
  let at = 0;
  for (const [name, bytes, count = 1] of members) {
    at = Math.ceil(at / bytes) * bytes;
    out[name] = at;
    at += bytes * count;
  }
  return out;
}

test("the limit offsets follow from VkPhysicalDeviceLimits' member list (VkDeviceSize is 8-byte aligned)", () => {
  const u32 = (name: string): [string, 4] => [name, 4];
  const offsets = cOffsets([
    ...["maxImageDimension1D", "maxImageDimension2D", "maxImageDimension3D", "maxImageDimensionCube", "maxImageArrayLayers", "maxTexelBufferElements", "maxUniformBufferRange"].map(u32),
    u32("maxStorageBufferRange"),
    ...["maxPushConstantsSize", "maxMemoryAllocationCount", "maxSamplerAllocationCount"].map(u32),
    ["bufferImageGranularity", 8],
    ["sparseAddressSpaceSize", 8],
    // maxBoundDescriptorSets through maxComputeSharedMemorySize: 39 uint32 members.
    ...Array.from({ length: 39 }, (_, i) => u32(`u32_${i}`)),
    ["maxComputeWorkGroupCount", 4, 3],
    u32("maxComputeWorkGroupInvocations"),
  ]);
  expect(offsets.u32_0).toBe(64);
  expect({ maxStorageBufferRange: offsets.maxStorageBufferRange, maxComputeWorkGroupInvocations: offsets.maxComputeWorkGroupInvocations }).toEqual(LIMIT_OFFSETS);
});

describe("writers", () => {
  test("application info asks for the API version; create info points at it with no layers or extensions", () => {
    const app = dv(SIZE.applicationInfo);
    writeApplicationInfo(app, makeApiVersion(1, 1, 0));
    expect(app.getUint32(0, true)).toBe(0);
    expect(app.getUint32(44, true)).toBe(0x401000);
    const info = dv(SIZE.instanceCreateInfo);
    writeInstanceCreateInfo(info, 0x7f00_1234_5678);
    expect(info.getUint32(0, true)).toBe(1);
    expect(info.getBigUint64(24, true)).toBe(0x7f00_1234_5678n);
    // enabledLayerCount (32) and enabledExtensionCount (48) stay 0.
    expect([info.getUint32(32, true), info.getUint32(48, true)]).toEqual([0, 0]);
  });

  test("properties2 chains the driver properties through pNext", () => {
    const p2 = dv(SIZE.physicalDeviceProperties2);
    const driver = dv(SIZE.driverProperties);
    writePropertiesChain(p2, driver, 0x5555_0000_1000);
    expect(p2.getUint32(0, true)).toBe(1000059001);
    expect(p2.getBigUint64(8, true)).toBe(0x5555_0000_1000n);
    expect(driver.getUint32(0, true)).toBe(STYPE.physicalDeviceDriverProperties);
    expect(driver.getUint32(0, true)).toBe(1000196000);
  });
});

describe("readers", () => {
  test("device properties inside a VkPhysicalDeviceProperties2 (at 16), as lavapipe fills them", () => {
    const p2 = dv(SIZE.physicalDeviceProperties2);
    p2.setUint32(16 + 0, makeApiVersion(1, 4, 305), true);
    p2.setUint32(16 + 8, 0x10005, true);
    p2.setUint32(16 + 12, 0, true);
    p2.setUint32(16 + 16, 4, true);
    putString(p2, 16 + 20, "llvmpipe (LLVM 15.0.6, 256 bits)");
    p2.setUint32(16 + 296 + 28, 134217728, true);
    p2.setUint32(16 + 296 + 232, 1024, true);
    expect(readDeviceProperties(p2, 16)).toEqual({
      apiVersion: makeApiVersion(1, 4, 305),
      vendorId: 0x10005,
      deviceId: 0,
      type: "cpu",
      name: "llvmpipe (LLVM 15.0.6, 256 bits)",
      maxStorageBufferRange: 134217728,
      maxComputeWorkGroupInvocations: 1024,
    });
  });

  test("every VkPhysicalDeviceType, and an unknown one as other", () => {
    const p = dv(SIZE.physicalDeviceProperties);
    const types = [0, 1, 2, 3, 4, 99].map((code) => (p.setUint32(16, code, true), readDeviceProperties(p).type));
    expect(types).toEqual(["other", "integrated-gpu", "discrete-gpu", "virtual-gpu", "cpu", "other"]);
  });

  test("driver name and info; zeroed when the driver skipped the chained struct", () => {
    const driver = dv(SIZE.driverProperties);
    expect(readDriverProperties(driver)).toEqual({ driverName: "", driverInfo: "" });
    putString(driver, 20, "llvmpipe");
    putString(driver, 276, "Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)");
    expect(readDriverProperties(driver)).toEqual({ driverName: "llvmpipe", driverInfo: "Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)" });
  });

  test("a char[] field filled to the end without a NUL, and UTF-8", () => {
    const v = dv(8);
    putString(v, 0, "abcdefgh");
    expect(readCString(v, 0, 4)).toBe("abcd");
    putString(v, 0, "é\0");
    expect(readCString(v, 0, 8)).toBe("é");
  });

  test("memory heaps: size and device-local flag, the largest device-local one wins", () => {
    const mem = dv(SIZE.memoryProperties);
    mem.setUint32(260, 3, true);
    const heap = (i: number, bytes: bigint, flags: number) => (mem.setBigUint64(264 + 16 * i, bytes, true), mem.setUint32(264 + 16 * i + 8, flags, true));
    heap(0, 8n << 30n, 1);
    heap(1, 64n << 30n, 0);
    heap(2, 25276510208n, 3);
    const heaps = readMemoryHeaps(mem);
    expect(heaps).toEqual([
      { bytes: 8 * 2 ** 30, deviceLocal: true },
      { bytes: 64 * 2 ** 30, deviceLocal: false },
      { bytes: 25276510208, deviceLocal: true },
    ]);
    expect(largestDeviceLocalHeap(heaps)).toBe(25276510208);
    expect(largestDeviceLocalHeap([{ bytes: 1, deviceLocal: false }])).toBe(0);
  });

  test("a heap count beyond VK_MAX_MEMORY_HEAPS reads no further than the struct", () => {
    const mem = dv(SIZE.memoryProperties);
    mem.setUint32(260, 1000, true);
    expect(readMemoryHeaps(mem)).toHaveLength(16);
  });
});

describe("names", () => {
  test("API versions", () => {
    expect(formatApiVersion(makeApiVersion(1, 4, 305))).toBe("1.4.305");
    expect(formatApiVersion(makeApiVersion(1, 1, 0))).toBe("1.1.0");
  });

  test("VkResult names, with the number for others", () => {
    expect(vkResultName(-9)).toBe("VK_ERROR_INCOMPATIBLE_DRIVER");
    expect(vkResultName(-3)).toBe("VK_ERROR_INITIALIZATION_FAILED");
    expect(vkResultName(-1000001004)).toBe("VkResult -1000001004");
  });

  test("vendor names for known ids only", () => {
    expect([0x10de, 0x1002, 0x8086, 0x10005, 0x13b5, 0x5143].map(vendorName)).toEqual(["NVIDIA", "AMD", "Intel", "Mesa (software)", "ARM", "Qualcomm"]);
    expect(vendorName(0x1234)).toBeUndefined();
  });
});
