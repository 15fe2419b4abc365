// The CPU checks behind `kiln doctor`: what this CPU is, and whether each served model's weight format is right and fast on it.
import { existsSync } from "node:fs";
import { scanModels } from "../models/registry.ts";
import { type CpuInfo, describeCpu, formatAdvice, readCpuInfo } from "./cpu.ts";
import { runCheck, type CheckResult } from "./doctor-checks.ts";

export function checkCpu(cpu: CpuInfo = readCpuInfo()): Promise<CheckResult> {
  return runCheck("cpu", false, "", async () => ({
    status: cpu.flags.has("avx2") ? "ok" : "warn",
    detail: describeCpu(cpu),
    ...(cpu.flags.has("avx2") ? {} : { fix: "ONNX Runtime's fast kernels need AVX2: run kiln on an x86-64 CPU from 2013 or later." }),
  }));
}

/** Warns for each served model whose default weight format is inexact or slow on this CPU. */
export function checkModelFormats(modelsDir: string, cpu: CpuInfo = readCpuInfo()): Promise<CheckResult> {
  return runCheck("model formats", false, "", async () => {
    if (!existsSync(modelsDir)) return { status: "skip", detail: "no models dir yet" };
    const notes = scanModels(modelsDir).models.map((m) => ({ id: m.id, dtype: m.defaultDtype, ...formatAdvice(m.defaultDtype, m.int8MaxLevel, cpu) }));
    if (!notes.length) return { status: "skip", detail: "no served models" };
    const bad = notes.filter((n) => n.level !== "ok");
    if (!bad.length) return { status: "ok", detail: notes.map((n) => `${n.id} (${n.dtype}): ${n.text}`).join("; ") };
    return {
      status: "warn",
      detail: bad.map((n) => `${n.id} (${n.dtype}) is ${n.level} here: ${n.text}`).join("; "),
      fix: bad.some((n) => n.level === "inexact")
        ? "Serve an exact format on this CPU: set default_dtype in the model's kiln.json to fp32 or q4, or rebuild its int8 weights with `kiln models build`."
        : "Consider another weight format for this CPU (default_dtype in the model's kiln.json).",
    };
  });
}
