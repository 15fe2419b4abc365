// Bun worker entry for embedding models: loads one sentence-transformers folder and serves the embedding protocol
// (embed, cancel) beside the supervisor's (workers/supervised-worker.ts), running the rows of every job it holds in
// shared batches, one run at a time.
import type { EmbedFromWorker, EmbedLoadSpec, EmbedToWorker } from "../src/protocol/embed.ts";
import { EmbedEngine } from "./embedding/embed-engine.ts";
import { loadEncoder } from "./embedding/encoder-runner.ts";
import { serveLifecycle, workLoop } from "./supervised-worker.ts";

let engine: EmbedEngine | null = null;

const runLoop = workLoop({
  stopping: () => life.stopping,
  hasWork: () => engine?.hasWork() ?? false,
  step: () => life.onDevice(() => engine!.step()),
  fatal: (err) => life.fatal(err),
});

const life = serveLifecycle<EmbedLoadSpec, EmbedToWorker, EmbedFromWorker>({
  async load(spec) {
    const runner = await loadEncoder(spec);
    engine = new EmbedEngine(runner, { ...spec, emit: (msg, transfer) => life.post(msg, transfer) });
    return { report: { device: "cpu", dtype: spec.dtype }, dispose: runner.dispose };
  },
  counts: () => engine?.counts() ?? { active: 0, queued: 0 },
  onMessage(msg) {
    if (msg.type === "embed") {
      try {
        if (!engine) throw new Error("model is not loaded");
        engine.add(msg.jobId, msg.inputs);
      } catch (err) {
        life.post({ type: "embed_failed", jobId: msg.jobId, message: err instanceof Error ? err.message : String(err) });
      }
    } else engine?.cancel(msg.jobId);
    void runLoop();
  },
});
