// Bun worker entry for diffusion models: loads one folder and serves the image protocol (load, render, cancel, ping,
// shutdown), running the renders it holds as batched rows, one pass at a time.
import type { ImageFromWorker, ImageLoadSpec, ImageWorkerIn, ImageWorkerOut } from "../src/scheduler/image-protocol.ts";
import { DiffusionEngine } from "./diffusion/engine.ts";
import { type DiffusionModel, loadDiffusion } from "./diffusion/load-diffusion.ts";

interface WorkerScope {
  onmessage: ((ev: MessageEvent<ImageWorkerIn>) => void) | null;
  postMessage(msg: ImageWorkerOut, transfer?: ArrayBuffer[]): void;
  close(): void;
}

// In a Bun worker the global object is the worker scope (`self`).
const scope = globalThis as unknown as WorkerScope;
const post = (msg: ImageWorkerOut, transfer?: ArrayBuffer[]) => scope.postMessage(msg, transfer ?? []);

let model: DiffusionModel | null = null;
let engine: DiffusionEngine | null = null;
let loading = false;
let looping = false;
let stopping = false;

// Lets queued messages (render, cancel, ping) run between passes, so they take effect at the next pass boundary.
const yieldToEvents = () => new Promise<void>((resolve) => setImmediate(resolve));

async function runLoop(): Promise<void> {
  if (looping || !engine) return;
  looping = true;
  try {
    while (!stopping && engine.hasWork()) {
      await engine.step();
      await yieldToEvents();
    }
  } catch (err) {
    // A render's own failures are answered inside the passes; reaching here means the engine's state is unreliable.
    post({ type: "fatal", message: err instanceof Error ? err.message : String(err) });
    stopping = true;
  } finally {
    looping = false;
  }
}

async function load(spec: ImageLoadSpec): Promise<void> {
  if (model || loading) {
    post({ type: "load_error", modelId: spec.id, message: "this worker already has a model" });
    return;
  }
  loading = true;
  const started = performance.now();
  try {
    model = await loadDiffusion(spec);
    engine = new DiffusionEngine(model, { maxBatch: spec.maxBatch, emit: (msg: ImageFromWorker, transfer) => post(msg, transfer) });
    post({ type: "loaded", modelId: spec.id, ms: performance.now() - started });
  } catch (err) {
    post({ type: "load_error", modelId: spec.id, message: err instanceof Error ? err.message : String(err) });
  } finally {
    loading = false;
  }
}

scope.onmessage = (ev) => {
  const msg = ev.data;
  if (stopping && msg.type !== "shutdown") return;
  switch (msg.type) {
    case "load":
      void load(msg.model);
      break;
    case "render":
      if (!engine) {
        post({ type: "render_failed", jobId: msg.jobId, retryable: false, message: "model is not loaded" });
        break;
      }
      try {
        engine.add(msg.jobId, msg.render);
      } catch (err) {
        // A malformed message (no render at all): nothing was held.
        post({ type: "render_failed", jobId: msg.jobId, retryable: false, message: err instanceof Error ? err.message : String(err) });
      }
      void runLoop();
      break;
    case "cancel":
      engine?.cancel(msg.jobId);
      void runLoop();
      break;
    case "ping": {
      const counts = engine?.counts() ?? { active: 0, queued: 0 };
      post({ type: "pong", nonce: msg.nonce, rssBytes: process.memoryUsage().rss, ...counts });
      break;
    }
    case "shutdown":
      // Nothing is answered: the backend has already given up on this worker's renders.
      stopping = true;
      scope.close();
      break;
  }
};
