import { describe, expect, test } from "bun:test";
import { describeCpu, formatAdvice, hasInt8DotProduct, int8Kernel, parseCpuInfo, readCpuInfo } from "../../../src/native/cpu.ts";

const cpuinfo = (model: string, flags: string, cores = 2) =>
  Array.from({ length: cores }, (_, i) => `processor\t: ${i}\nvendor_id\t: x\nmodel name\t: ${model}\nflags\t\t: ${flags}\n`).join("\n");

const EPYC = parseCpuInfo(cpuinfo("AMD EPYC", "fpu sse2 avx f16c fma avx2 bmi2"));
const XEON = parseCpuInfo(cpuinfo("Intel(R) Xeon(R) Platinum 8375C", "avx2 fma avx512f avx512bw avx512_vnni", 4));
const SPR = parseCpuInfo(cpuinfo("Intel(R) Xeon(R) Platinum 8488C", "avx2 fma avx512f avx512bw avx512_vnni avx512_fp16 amx_int8 amx_bf16"));

describe("cpu", () => {
  test("parses model, cores and flags", () => {
    expect(EPYC.model).toBe("AMD EPYC");
    expect(EPYC.logicalCores).toBe(2);
    expect(EPYC.flags.has("avx2")).toBe(true);
    expect(XEON.logicalCores).toBe(4);
    expect(parseCpuInfo("")).toEqual({ model: "unknown CPU", logicalCores: 0, flags: new Set() });
  });

  test("names the int8 kernel family ONNX Runtime picks", () => {
    expect(int8Kernel(EPYC)).toBe("AVX2 (no VNNI: int16 pair sums)");
    expect(int8Kernel(XEON)).toBe("AVX-512 VNNI");
    expect(int8Kernel(SPR)).toBe("AMX");
    expect(hasInt8DotProduct(EPYC)).toBe(false);
    expect(hasInt8DotProduct(parseCpuInfo(cpuinfo("Intel Core", "avx2 avx_vnni")))).toBe(true);
  });

  test("one line names the CPU, the flags present and the ones missing", () => {
    expect(describeCpu(EPYC)).toBe("AMD EPYC, 2 logical cores; avx2 fma f16c; without avx512f avx512_vnni avx_vnni amx_int8; int8 kernels: AVX2 (no VNNI: int16 pair sums)");
    expect(describeCpu(SPR)).toContain("without avx_vnni;");
  });

  test("format advice: full-range int8 is inexact without VNNI, 7-bit int8 is exact but slow, fine with VNNI", () => {
    expect(formatAdvice("int8", null, EPYC).level).toBe("inexact");
    expect(formatAdvice("int8", 127, EPYC).level).toBe("inexact");
    expect(formatAdvice("int8", 63, EPYC).level).toBe("slow");
    expect(formatAdvice("int8", null, XEON).level).toBe("ok");
    expect(formatAdvice("fp16", null, EPYC).level).toBe("slow");
    expect(formatAdvice("q4f16", null, SPR).level).toBe("ok");
    expect(formatAdvice("fp32", null, EPYC)).toEqual({ level: "ok", text: "fp32 runs on AVX2 kernels" });
    expect(formatAdvice("q4", null, parseCpuInfo(cpuinfo("old", "sse2"))).level).toBe("slow");
  });

  test("reads this machine's CPU", () => {
    const cpu = readCpuInfo();
    expect(cpu.logicalCores).toBeGreaterThan(0);
    expect(describeCpu(cpu)).toContain(cpu.model);
    expect(readCpuInfo("/nonexistent/cpuinfo").model).toStartWith("unknown CPU");
  });
});
