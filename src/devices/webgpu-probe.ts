// The start-up probe of the webgpu path: a tiny session (Y = X·W + B) on ONNX Runtime's webgpu EP, run and checked,
// within a time limit. A driver Dawn refuses, a missing adapter or a wrong answer is a failed probe, never a crash.
import { tmpdir } from "node:os";
import * as ort from "onnxruntime-node";
import { probeExpected, probeModel } from "../native/probe-model.ts";

export type ProbeOutcome = { ok: true; ms: number } | { ok: false; error: string };

/** ONNX Runtime's messages carry a source path and assertion text; the reason is their last sentence. */
export function probeReason(message: string): string {
  const flat = message.replace(/\s+/g, " ").trim();
  const m = /Failed to get a WebGPU adapter: ?(.*)$/i.exec(flat);
  if (m) return `no WebGPU adapter (${m[1] || "none found"})`;
  const tail = flat.replace(/^.*\] ?/, "");
  return tail.length > 200 ? `${tail.slice(0, 200)}…` : tail;
}

export async function probeWebgpu(timeoutMs = 30_000): Promise<ProbeOutcome> {
  // Dawn wants a runtime directory; a service started outside a login session has none.
  process.env.XDG_RUNTIME_DIR ??= tmpdir();
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs)));
  try {
    const run = (async () => {
      const session = await ort.InferenceSession.create(probeModel(), { executionProviders: ["webgpu"], logSeverityLevel: 3 });
      try {
        const x: [number, number] = [1.5, -2];
        const out = await session.run({ X: new ort.Tensor("float32", Float32Array.from(x), [1, 2]) });
        const y = [...(out.Y!.data as Float32Array)];
        const want = probeExpected(x);
        if (y.length !== want.length || y.some((v, i) => !(Math.abs(v - want[i]!) <= 1e-4))) throw new Error(`the adapter computed [${y}] for [${want}]`);
      } finally {
        await session.release();
      }
    })();
    await Promise.race([run, timeout]);
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (e) {
    return { ok: false, error: probeReason(e instanceof Error ? e.message : String(e)) };
  } finally {
    clearTimeout(timer);
  }
}
