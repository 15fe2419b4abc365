// What this CPU is, and what it means for ONNX Runtime: the instruction sets that pick its kernels, and advice per weight format.
import { readFileSync } from "node:fs";

export interface CpuInfo {
  model: string;
  logicalCores: number;
  flags: ReadonlySet<string>;
}

/** The /proc/cpuinfo flags that decide which of ONNX Runtime's CPU kernels run, in the order they are printed. */
export const KERNEL_FLAGS = ["avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512_fp16", "amx_int8", "amx_bf16"] as const;

/** Parses the text of /proc/cpuinfo (the first processor's model name and flags; one "processor" line per core). */
export function parseCpuInfo(text: string): CpuInfo {
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, "m").exec(text)?.[1]?.trim();
  return {
    model: field("model name") ?? "unknown CPU",
    logicalCores: (text.match(/^processor\s*:/gm) ?? []).length,
    flags: new Set((field("flags") ?? "").split(/\s+/).filter(Boolean)),
  };
}

export function readCpuInfo(path = "/proc/cpuinfo"): CpuInfo {
  try {
    return parseCpuInfo(readFileSync(path, "utf8"));
  } catch {
    return { model: "unknown CPU (no /proc/cpuinfo)", logicalCores: 0, flags: new Set() };
  }
}

/** True when u8×s8 dot products accumulate in 32 bits (VNNI or AMX) rather than in saturating int16 pairs. */
export function hasInt8DotProduct(cpu: CpuInfo): boolean {
  return cpu.flags.has("avx512_vnni") || cpu.flags.has("avx_vnni") || cpu.flags.has("amx_int8");
}

/** The u8×s8 kernel family ONNX Runtime's MLAS picks on this CPU, best first. */
export function int8Kernel(cpu: CpuInfo): string {
  const f = cpu.flags;
  if (f.has("amx_int8")) return "AMX";
  if (f.has("avx512_vnni")) return "AVX-512 VNNI";
  if (f.has("avx_vnni")) return "AVX-VNNI";
  if (f.has("avx512bw")) return "AVX-512BW (no VNNI: int16 pair sums)";
  if (f.has("avx2")) return "AVX2 (no VNNI: int16 pair sums)";
  return "SSE (no AVX2)";
}

/** One line for benchmark headers and `kiln doctor`: model, cores, the kernel-deciding flags present and absent. */
export function describeCpu(cpu: CpuInfo): string {
  const present = KERNEL_FLAGS.filter((f) => cpu.flags.has(f));
  const missing = ["avx512f", "avx512_vnni", "avx_vnni", "amx_int8"].filter((f) => !cpu.flags.has(f));
  return `${cpu.model}, ${cpu.logicalCores} logical cores; ${present.join(" ") || "no AVX2"}` +
    `${missing.length ? `; without ${missing.join(" ")}` : ""}; int8 kernels: ${int8Kernel(cpu)}`;
}

export interface FormatAdvice {
  level: "ok" | "slow" | "inexact";
  text: string;
}

/** Whether a model's weight format computes right, and fast, on this CPU. `int8MaxLevel` is null when unknown. */
export function formatAdvice(dtype: string, int8MaxLevel: number | null, cpu: CpuInfo): FormatAdvice {
  if (!cpu.flags.has("avx2")) return { level: "slow", text: "this CPU has no AVX2, which ONNX Runtime's fast CPU kernels need" };
  if (dtype === "int8" || dtype === "uint8" || dtype === "q8") {
    if (hasInt8DotProduct(cpu)) return { level: "ok", text: `int8 on ${int8Kernel(cpu)} kernels` };
    if (int8MaxLevel === null || int8MaxLevel > 63) {
      return {
        level: "inexact",
        text: "int8 weights of unknown or full range: without VNNI, ONNX Runtime adds pairs of u8×s8 products in int16, " +
          "which full-range weights overflow, so results are wrong and differ between CPUs; rebuild with 7-bit weights (kiln models build) or serve q4/fp32",
      };
    }
    return { level: "slow", text: "int8 is exact here (7-bit weights) but runs on AVX2 kernels without VNNI, slower than on a VNNI CPU; q4 is faster at one client" };
  }
  if (dtype === "fp16" || dtype.endsWith("f16")) {
    if (cpu.flags.has("avx512_fp16")) return { level: "ok", text: "fp16 on AVX-512 FP16" };
    return { level: "slow", text: "fp16 weights: ONNX Runtime's CPU provider has few fp16 kernels and converts to fp32 around the rest; prefer fp32 or q4" };
  }
  return { level: "ok", text: `${dtype} runs on ${cpu.flags.has("avx512f") ? "AVX-512" : "AVX2"} kernels` };
}
