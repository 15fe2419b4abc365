// Bun worker entry: loads one model and serves the scheduler's protocol (load, add, cancel, ping, shutdown) with the batching engine.
import type { FromWorker, ModelLoadSpec, SeqDelta, SeqFinish, StepBatch, ToWorker } from "../src/scheduler/protocol.ts";
import { DEFAULT_BURST_WINDOW, gatherBurst } from "./engine/burst.ts";
import { Engine } from "./engine/engine.ts";
import { LazyConstraintSource } from "./engine/constraint-source.ts";
import { loadModel } from "./engine/load-model.ts";
import type { OrtRunner } from "./engine/ort-runner.ts";
import { profilerFromEnv } from "./engine/step-profile.ts";

interface WorkerScope {
  onmessage: ((ev: MessageEvent<ToWorker>) => void) | null;
  postMessage(msg: FromWorker): void;
  close(): void;
}

// In a Bun worker the global object is the worker scope (`self`).
const scope = globalThis as unknown as WorkerScope;
const post = (msg: FromWorker) => scope.postMessage(msg);

let engine: Engine | null = null;
let runner: OrtRunner | null = null;
/** Step timings for `npm run bench -- --profile` (KILN_PROFILE_FILE); null when not profiling. */
const profiler = profilerFromEnv();
let loading = false;
let looping = false;
let stopping = false;

// Lets queued messages (add, cancel, ping) run between steps, so they take effect at the next step boundary.
const yieldToEvents = () => new Promise<void>((resolve) => setImmediate(resolve));

async function runLoop(): Promise<void> {
  if (looping || !engine) return;
  looping = true;
  try {
    // Started from idle: let the rest of a burst arrive so it shares the first prefill.
    const { active, queued } = engine.counts();
    if (engine.maxBatch > 1 && active === 0 && queued > 0) await gatherBurst(() => engine!.counts().queued, DEFAULT_BURST_WINDOW);
    while (!stopping && engine.hasWork()) {
      if (profiler) await profiledStep(engine, runner!);
      else await engine.step();
      await yieldToEvents();
    }
  } catch (err) {
    // Forward-pass failures are handled per run inside the engine; reaching here means the engine's state is unreliable.
    post({ type: "fatal", message: err instanceof Error ? err.message : String(err) });
    stopping = true;
  } finally {
    looping = false;
    profiler?.flush();
  }
}

async function profiledStep(e: Engine, r: OrtRunner): Promise<void> {
  const started = performance.now();
  profiler!.begin(started);
  const run0 = r.runMs;
  await e.step();
  const now = performance.now();
  profiler!.end(now, { ...e.lastStep, runMs: r.runMs - run0, stepMs: now - started });
}

function stepMessage(deltas: SeqDelta[], finished: SeqFinish[], batch: StepBatch | undefined): FromWorker {
  return batch ? { type: "step", deltas, finished, batch } : { type: "step", deltas, finished };
}

async function load(spec: ModelLoadSpec): Promise<void> {
  if (engine || loading) {
    post({ type: "load_error", modelId: spec.id, message: "this worker already has a model" });
    return;
  }
  loading = true;
  const started = performance.now();
  try {
    const loaded = await loadModel(spec);
    runner = loaded.runner;
    engine = new Engine(loaded.runner, {
      maxBatch: Math.max(1, Math.floor(spec.maxBatch)),
      tokenBytes: loaded.tokenBytes,
      // Without an end id a constrained answer could never finish: such a model serves unconstrained requests only.
      ...(loaded.eosIds.length ? { constraints: new LazyConstraintSource(loaded.runner.vocabSize, loaded.tokenizerJson, loaded.eosIds) } : {}),
      emit: profiler
        ? (deltas, finished, batch) => {
            const t0 = performance.now();
            post(stepMessage(deltas, finished, batch));
            profiler.addPost(performance.now() - t0);
          }
        : (deltas, finished, batch) => post(stepMessage(deltas, finished, batch)),
      // A sequence's media finished preprocessing: the loop may have gone idle waiting for it.
      wake: () => void runLoop(),
    });
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
    case "add":
      if (!engine) {
        const promptTokens = Array.isArray(msg.promptIds) ? msg.promptIds.length : 0;
        post({ type: "step", deltas: [], finished: [{ seqId: msg.seqId, reason: "error", promptTokens, outputTokens: 0, message: "model is not loaded" }] });
        break;
      }
      engine.add(msg.seqId, msg.promptIds, msg.params, msg.media);
      void runLoop();
      break;
    case "cancel":
      engine?.cancel(msg.seqId);
      void runLoop();
      break;
    case "ping": {
      const counts = engine?.counts() ?? { active: 0, queued: 0 };
      post({ type: "pong", nonce: msg.nonce, rssBytes: process.memoryUsage().rss, ...counts });
      break;
    }
    case "shutdown":
      // Nothing is finished or reported: the scheduler has already given up on this worker's sequences.
      stopping = true;
      scope.close();
      break;
  }
};
