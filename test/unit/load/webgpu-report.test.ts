// The bench's device lines and webgpu section text: the shapes the README test matches, and the transfer-growth check.
import { describe, expect, test } from "bun:test";
import { accuracyLine, adapterLine, deviceLine, skippedLine, type StepRow, stepTable, transferGrowth, webgpuHere } from "../../load/webgpu-report.ts";

const row = (device: string, rows: number, context: number, toDevice: number | null, toHost: number | null): StepRow => ({ device, rows, context, steps: 7, stepMsP50: 12.34, toDevice, toHost });

describe("webgpu section text", () => {
  test("the device line says what auto chose and why, without repeating auto", () => {
    const line = deviceLine({ device: "cpu", dtype: "fp32", reason: "auto: the only Vulkan adapter is a software one (llvmpipe), slower than the CPU path" });
    expect(line).toBe("device: cpu — what the server's default KILN_DEVICE=auto would choose here: the only Vulkan adapter is a software one (llvmpipe), slower than the CPU path");
    expect(deviceLine({ device: "webgpu", dtype: "q4f16", reason: "auto: the webgpu probe passed on RTX" })).toStartWith("device: webgpu (q4f16) — ");
  });

  test("webgpu runs with a passed probe, naming a hardware adapter before a software one", () => {
    const adapters = [{ name: "llvmpipe", software: true }, { name: "RTX 4090", software: false }];
    expect(webgpuHere({ adapters, probe: { ok: true, ms: 5 } })).toEqual({ ok: true, adapter: "RTX 4090", software: false });
    expect(adapterLine(webgpuHere({ adapters: adapters.slice(0, 1), probe: { ok: true, ms: 5 } }))).toBe("webgpu adapter: llvmpipe (software: numbers say nothing of GPU speed)");
    expect(adapterLine(webgpuHere({ adapters: [], adaptersError: "no Vulkan loader", probe: null }))).toBe("webgpu: not available (no Vulkan loader)");
    expect(adapterLine(webgpuHere({ adapters, probe: { ok: false, error: "no WebGPU adapter" } }))).toBe("webgpu: not available (the webgpu probe failed: no WebGPU adapter)");
    expect(skippedLine("KILN_BENCH_WEBGPU=0")).toBe("webgpu section skipped: KILN_BENCH_WEBGPU=0");
  });

  test("the accuracy line gives the reference, the minimum, the bound and the argmax agreement, and flags a miss", () => {
    const a = { positions: 32, min: 0.99981, median: 0.9999, argmaxSame: 31 };
    expect(accuracyLine("fp16", a, { reference: "cpu fp32", bound: 0.99749, derivation: "why" })).toBe(
      "accuracy: webgpu fp16 vs cpu fp32 next-token logits over a 32-token teacher-forced run, correlation min 0.9998 (bound 0.9975: why), argmax 31/32",
    );
    expect(accuracyLine("fp16", { ...a, min: 0.99 }, { reference: "cpu fp32", bound: 0.9975, derivation: "why" })).toEndWith("argmax 31/32 — BELOW the bound");
    // Without a bound of its own: beside the CPU's own format against the same reference.
    expect(accuracyLine("q4f16", { ...a, min: 0.8377, argmaxSame: 3 }, { reference: "cpu fp32", versus: { ...a, min: 0.8489 } })).toBe(
      "accuracy: webgpu q4f16 vs cpu fp32 next-token logits over a 32-token teacher-forced run, correlation min 0.8377 (the CPU's own format: 0.8489), argmax 3/32",
    );
  });

  test("the step table has one row per device and shape, bytes n/a for the CPU", () => {
    const table = stepTable([row("webgpu q4f16", 16, 512, 324, 131072), row("cpu int8", 1, 46, null, null)]);
    expect(table).toContain("| device       | rows | context | step ms p50 | host→device B/step | device→host B/step |");
    expect(table).toMatch(/^\| webgpu q4f16 \| +16 \| +512 \| +12\.3 \| +324 \| +131072 \|$/m);
    expect(table).toMatch(/^\| cpu int8 +\| +1 \| +46 \| +12\.3 \| +n\/a \| +n\/a \|$/m);
  });

  test("bytes per step are compared across contexts for each device and batch, never across batches", () => {
    const same = [row("webgpu q4f16", 1, 46, 24, 8192), row("webgpu q4f16", 1, 512, 24, 8192), row("webgpu q4f16", 16, 46, 324, 131072), row("webgpu q4f16", 16, 512, 324, 131072), row("cpu int8", 1, 46, null, null)];
    expect(transferGrowth(same)).toEqual({ grows: false, line: "transfer per decode step does not grow with context: yes", offenders: [] });
    const grew = transferGrowth([...same.slice(0, 3), row("webgpu q4f16", 16, 512, 324, 140000)]);
    expect(grew.grows).toBe(true);
    expect(grew.offenders).toEqual(["webgpu q4f16 at 16 rows: 324/131072 B at context 46, 324/140000 B at context 512"]);
    expect(grew.line).toStartWith("transfer per decode step does not grow with context: NO (");
  });
});
