// kiln doctor's adapters row and section, and the provider rows' account of where the probe ran: pure on fixtures, then on this machine and without a driver.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { formatDoctorReport } from "../../../src/cli/doctor.ts";
import { adaptersResult, ADAPTERS_FIX, checkAdapters, formatAdapter, SOFTWARE_NOTE } from "../../../src/native/doctor-gpu-checks.ts";
import { kernelProviders, providerRunResult } from "../../../src/native/provider-profile.ts";
import type { VulkanAdapter } from "../../../src/native/vulkan-adapters.ts";
import { tempDir } from "../../helpers/kiln.ts";

const LLVMPIPE: VulkanAdapter = {
  name: "llvmpipe (LLVM 15.0.6, 256 bits)",
  vendorId: 0x10005,
  vendorName: "Mesa (software)",
  deviceId: 0,
  type: "cpu",
  driverName: "llvmpipe",
  driverInfo: "Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)",
  apiVersion: "1.4.305",
  deviceLocalBytes: 25276510208,
  maxStorageBufferRange: 134217728,
  maxComputeWorkGroupInvocations: 1024,
};
const GPU: VulkanAdapter = {
  ...LLVMPIPE,
  name: "Example GPU",
  vendorId: 0x1234,
  vendorName: undefined,
  type: "discrete-gpu",
  driverName: "",
  driverInfo: "",
  deviceLocalBytes: 16 * 1024 ** 3,
  maxStorageBufferRange: 2 ** 32 - 1,
};

describe("the adapters row", () => {
  test("one line per adapter; a software one carries the note", () => {
    expect(formatAdapter(LLVMPIPE)).toBe(
      "llvmpipe (LLVM 15.0.6, 256 bits): vendor Mesa (software), type cpu, backend vulkan, driver llvmpipe: Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6), " +
        `API 1.4.305, 23.5 GiB device-local, max storage buffer 128 MiB; ${SOFTWARE_NOTE}`,
    );
    expect(formatAdapter(GPU)).toBe(
      "Example GPU: vendor 0x1234, type discrete-gpu, backend vulkan, driver not reported, API 1.4.305, 16.0 GiB device-local, max storage buffer 4095 MiB",
    );
  });

  test("adapters found: ok, named in the row, one section line each", () => {
    expect(adaptersResult({ adapters: [GPU, LLVMPIPE] })).toEqual({
      status: "ok",
      detail: "2 Vulkan adapters: Example GPU, llvmpipe (LLVM 15.0.6, 256 bits) (software)",
      lines: [formatAdapter(GPU), formatAdapter(LLVMPIPE)],
    });
  });

  test("none: a warning with the loader's error (or the empty list) and the fix", () => {
    expect(adaptersResult({ adapters: [], error: "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER" })).toEqual({
      status: "warn",
      detail: "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER",
      fix: ADAPTERS_FIX,
    });
    expect(adaptersResult({ adapters: [] }).detail).toBe("the Vulkan loader lists no adapter");
  });

  test("the report puts a check's lines in a section under the table", async () => {
    const text = formatDoctorReport([await checkAdapters(() => ({ adapters: [GPU] }))], "h");
    expect(text.split("\n").slice(-5)).toEqual(["", "adapters:", `  ${formatAdapter(GPU)}`, "", "All required checks passed."]);
  });
});

describe("where a provider's probe ran, from ONNX Runtime's profile", () => {
  // Shaped like the events onnxruntime-node 1.30 wrote for the probe on webgpu here (session events have no provider).
  const profile = (provider: string) => [
    { cat: "Session", name: "model_loading_array", args: {} },
    { cat: "Node", name: "matmul/MatMulAddFusion_fence_before", args: { op_name: "Gemm" } },
    { cat: "Node", name: "matmul/MatMulAddFusion_kernel_time", args: { op_name: "Gemm", provider } },
    { cat: "Node", name: "matmul/MatMulAddFusion_kernel_time", args: { op_name: "Gemm", provider } },
  ];

  test("kernelProviders: each kernel once; anything else is no kernels", () => {
    expect(kernelProviders(profile("WebGpuExecutionProvider"))).toEqual([{ op: "Gemm", provider: "WebGpuExecutionProvider" }]);
    expect(kernelProviders({ not: "a list" })).toEqual([]);
    expect(kernelProviders([null, 3, { args: null }])).toEqual([]);
  });

  test("ran where asked: ok, naming the provider", () => {
    expect(providerRunResult("webgpu", kernelProviders(profile("WebGpuExecutionProvider")))).toEqual({
      status: "ok",
      detail: "ran MatMul+Add as Gemm on WebGpuExecutionProvider, output as expected",
    });
    expect(providerRunResult("cpu", kernelProviders(profile("CPUExecutionProvider"))).status).toBe("ok");
  });

  test("a provider that left everything to the CPU is a warning", () => {
    expect(providerRunResult("webgpu", kernelProviders(profile("CPUExecutionProvider")))).toEqual({
      status: "warn",
      detail: "ran MatMul+Add as Gemm on CPUExecutionProvider: webgpu loaded but the CPU did the work",
    });
  });
});

test("on this machine: Mesa's llvmpipe, marked as software", async () => {
  const r = await checkAdapters();
  expect(r).toMatchObject({ name: "adapters", required: false, status: "ok" });
  expect(r.detail).toContain("llvmpipe");
  expect(r.detail).toEndWith("(software)");
  expect(r.lines).toHaveLength(1);
  expect(r.lines![0]).toStartWith("llvmpipe (LLVM");
  expect(r.lines![0]).toContain("vendor Mesa (software), type cpu, backend vulkan, driver llvmpipe: Mesa ");
  expect(r.lines![0]).toEndWith(SOFTWARE_NOTE);
});

test("kiln doctor without a Vulkan driver: no adapters, the error and the fix, and still exit 0", () => {
  const dataDir = tempDir("kiln-doctor-");
  const main = join(import.meta.dir, "..", "..", "..", "src", "main.ts");
  const r = Bun.spawnSync([process.execPath, main, "doctor"], {
    env: { ...process.env, KILN_DATA_DIR: dataDir, KILN_MODELS_DIR: join(dataDir, "models"), VK_ICD_FILENAMES: "/nonexistent", VK_DRIVER_FILES: "/nonexistent", XDG_RUNTIME_DIR: "/tmp" },
  });
  const out = r.stdout.toString();
  expect(out).toMatch(/^adapters +WARN +vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER \(the loader found no Vulkan driver\)$/m);
  expect(out).toContain(`  adapters (optional): ${ADAPTERS_FIX}`);
  expect(out).not.toContain("\nadapters:\n");
  expect(out).toMatch(/^provider: webgpu +WARN +Failed to get a WebGPU adapter/m);
  expect(out).toEndWith("All required checks passed.\n");
  expect(r.exitCode).toBe(0);
});
