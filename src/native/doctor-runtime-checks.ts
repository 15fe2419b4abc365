// The runtime checks behind `kiln doctor`: ONNX Runtime, a worker thread, sharp, and the execution providers.
import { endedProfile } from "../modelgen/node-placement.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import sharp from "sharp";
import { runCheck, type CheckResult } from "./doctor-checks.ts";
import type { DoctorWorkerReply } from "./doctor-worker.ts";
import { probeExpected, probeModel } from "./probe-model.ts";
import { kernelProviders, providerRunResult } from "./provider-profile.ts";
import { WORKER_ENTRIES, workerEntryUrl } from "./worker-url.ts";

async function runProbe(session: ort.InferenceSession, x: [number, number]): Promise<number[]> {
  const out = await session.run({ X: new ort.Tensor("float32", Float32Array.from(x), [1, 2]) });
  return [...(out.Y!.data as Float32Array)];
}

function assertProbe(x: [number, number], y: number[]): void {
  const want = probeExpected(x);
  if (y.length !== 2 || y.some((v, i) => Math.abs(v - want[i]!) > 1e-5)) throw new Error(`wrong result: got [${y}], expected [${want}]`);
}

export function checkOnnxRuntime(): Promise<CheckResult> {
  return runCheck("onnxruntime session", true, "ONNX Runtime needs glibc ≥ 2.28 and libstdc++ (apt-get install libstdc++6).", async () => {
    const session = await ort.InferenceSession.create(probeModel(), { intraOpNumThreads: 1 });
    const x: [number, number] = [3, -2];
    assertProbe(x, await runProbe(session, x));
    await session.release();
    return { status: "ok", detail: `ONNX Runtime ${ort.env.versions.node}: created a session and ran MatMul+Add (cpu)` };
  });
}

export function checkWorker(timeoutMs = 30_000): Promise<CheckResult> {
  const fix = "Worker threads could not load the inference libraries: run `kiln doctor` from source to compare, and report the error.";
  return runCheck("worker thread", true, fix, async () => {
    const started = performance.now();
    const worker = new Worker(workerEntryUrl(WORKER_ENTRIES.doctor));
    const x: [number, number] = [-1, 0.5];
    try {
      const reply = await new Promise<DoctorWorkerReply>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no reply within ${timeoutMs} ms`)), timeoutMs);
        worker.onmessage = (e) => (clearTimeout(timer), resolve(e.data));
        worker.onerror = (e) => (clearTimeout(timer), reject(new Error(e.message)));
        worker.postMessage({ x });
      });
      if (!reply.ok) throw new Error(reply.error);
      assertProbe(x, reply.y);
      const ms = Math.round(performance.now() - started);
      return { status: "ok", detail: `round trip in ${ms} ms: transformers.js ${reply.transformers} loaded, ONNX Runtime session ran` };
    } finally {
      worker.terminate();
    }
  });
}

/** Decode, resize, composite, encode (JPEG, WebP, PNG), then decode the result and look at two pixels. */
export function checkSharp(): Promise<CheckResult> {
  return runCheck("sharp (libvips)", true, "sharp's libvips could not process an image: check free memory and the native libraries row above.", async () => {
    const red = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 255, g: 0, b: 0 } } }).png().toBuffer();
    const blue = await sharp({ create: { width: 8, height: 8, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 1 } } }).png().toBuffer();
    const meta = await sharp(red).metadata();
    if (meta.format !== "png" || meta.width !== 64 || meta.height !== 48) throw new Error(`decoded ${meta.format} ${meta.width}x${meta.height}, expected png 64x48`);
    const resized = await sharp(red).resize(32, 24).composite([{ input: blue, left: 4, top: 4 }]).png().toBuffer();
    for (const format of ["jpeg", "webp"] as const) {
      const encoded = await sharp(resized).toFormat(format).toBuffer();
      const m = await sharp(encoded).metadata();
      if (m.format !== format || m.width !== 32) throw new Error(`${format} round trip gave ${m.format} ${m.width} px wide`);
    }
    const { data, info } = await sharp(resized).raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    if (info.width !== 32 || info.height !== 24) throw new Error(`resize gave ${info.width}x${info.height}, expected 32x24`);
    if (px(0, 0).join() !== "255,0,0" || px(6, 6).join() !== "0,0,255") throw new Error(`pixels ${px(0, 0)} / ${px(6, 6)}, expected red / blue`);
    return { status: "ok", detail: `sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}): decode, resize, composite, JPEG/WebP/PNG` };
  });
}

const EP_FIX: Record<string, string> = {
  webgpu: "WebGPU without a GPU needs Mesa ≥ 25's lavapipe (mesa-vulkan-drivers and libdrm from bookworm-backports) and XDG_RUNTIME_DIR set.",
  cuda: "onnxruntime-node's npm package does not carry the CUDA provider libraries; kiln runs on the CPU.",
  tensorrt: "Not carried by onnxruntime-node's npm package; kiln runs on the CPU.",
};

/** Runs the probe model on one provider with ONNX Runtime's profiler on, and returns which provider ran each kernel. */
async function probeProvider(backend: string): Promise<{ op: string; provider: string }[]> {
  const dir = mkdtempSync(join(tmpdir(), "kiln-doctor-profile-"));
  try {
    // Level 3 (errors only) keeps ONNX Runtime's own warnings out of the report.
    const options = { executionProviders: [backend], logSeverityLevel: 3, intraOpNumThreads: 1, enableProfiling: true, profileFilePrefix: join(dir, "probe") } as const;
    const session = await ort.InferenceSession.create(probeModel(), options);
    const x: [number, number] = [2, 2];
    assertProbe(x, await runProbe(session, x));
    const profile = endedProfile(session, dir);
    await session.release();
    return profile ? kernelProviders(JSON.parse(profile)) : [];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One row per execution provider ONNX Runtime knows of: cpu must run, the others are reported. */
export async function checkExecutionProviders(): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const backend of ort.listSupportedBackends()) {
    const name = `provider: ${backend.name}`;
    const required = backend.name === "cpu";
    const fix = EP_FIX[backend.name] ?? "Not needed: kiln runs on the CPU.";
    if (!backend.bundled) {
      results.push({ name, required, status: "skip", detail: "not in onnxruntime-node's npm package (kiln runs on the CPU)", fix });
      continue;
    }
    results.push(
      await runCheck(name, required, fix, async () => {
        const run = providerRunResult(backend.name, await probeProvider(backend.name));
        return run.status === "ok" ? run : { ...run, fix };
      }),
    );
  }
  return results;
}
