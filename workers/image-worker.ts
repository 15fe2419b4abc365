// Bun worker entry for diffusion models: loads one folder and serves the image protocol (render, cancel) beside the
// supervisor's (workers/supervised-worker.ts), running the renders it holds as batched rows, one pass at a time.
import type { ImageFromWorker, ImageLoadSpec, ImageToWorker } from "../src/protocol/image.ts";
import { DiffusionEngine } from "./image/engine.ts";
import { loadDiffusion } from "./image/load-diffusion.ts";
import { servedProblem } from "./image/render-check.ts";
import { serveLifecycle, workLoop } from "./supervised-worker.ts";

let engine: DiffusionEngine | null = null;

// A render's own failures are answered inside the passes.
const runLoop = workLoop({
  stopping: () => life.stopping,
  hasWork: () => engine?.hasWork() ?? false,
  step: () => life.onDevice(() => engine!.step()),
  fatal: (err) => life.fatal(err),
});

const life = serveLifecycle<ImageLoadSpec, ImageToWorker, ImageFromWorker>({
  async load(spec) {
    const model = await loadDiffusion(spec);
    const problem = servedProblem(model, spec.sizes, spec.textLength);
    if (problem) {
      await model.dispose();
      throw new Error(problem);
    }
    engine = new DiffusionEngine(model, { maxBatch: spec.maxBatch, emit: (msg, transfer) => life.post(msg, transfer) });
    return { report: model.report, dispose: model.dispose };
  },
  counts: () => engine?.counts() ?? { active: 0, queued: 0 },
  onMessage(msg) {
    if (msg.type === "render") {
      if (!engine) {
        life.post({ type: "render_failed", jobId: msg.jobId, retryable: false, message: "model is not loaded" });
        return;
      }
      try {
        engine.add(msg.jobId, msg.render);
      } catch (err) {
        // A malformed message (no render at all): nothing was held.
        life.post({ type: "render_failed", jobId: msg.jobId, retryable: false, message: err instanceof Error ? err.message : String(err) });
      }
    } else engine?.cancel(msg.jobId);
    void runLoop();
  },
});
