// Bun worker entry: loads one model and serves the scheduler's protocol (add, cancel) beside the supervisor's
// (workers/supervised-worker.ts) with the batching engine.
import type { FromWorker, ModelLoadSpec, SeqDelta, SeqFinish, StepBatch, TextToWorker } from "../src/protocol/text.ts";
import { DEFAULT_BURST_WINDOW, gatherBurst } from "./text/burst.ts";
import { Engine } from "./text/engine.ts";
import { LazyConstraintSource } from "./text/constraint-source.ts";
import { loadModel } from "./text/load-model.ts";
import type { ModelRunner } from "./text/model-runner.ts";
import { loadDeviceModel } from "./text/device/load-device-model.ts";
import { loadGqaCpuModel } from "./text/device/load-gqa-cpu.ts";
import { PrefixCache } from "./text/prefix-cache.ts";
import { PrefixReuse } from "./text/prefix-reuse.ts";
import { profilerFromEnv } from "./text/step-profile.ts";
import { serveLifecycle, yieldToEvents } from "./supervised-worker.ts";

let engine: Engine | null = null;
let runner: (ModelRunner<unknown> & { runMs: number }) | null = null;
/** Step timings for `npm run bench -- --profile` (KILN_PROFILE_FILE); null when not profiling. */
const profiler = profilerFromEnv();
let looping = false;
/** How many more requests the server said it was preparing, with the last add (src/scheduler/admissions.ts). */
let announced = 0;

async function runLoop(): Promise<void> {
  if (looping || !engine) return;
  looping = true;
  try {
    // Started from idle: let the rest of a burst arrive so it shares the first prefill.
    const { active, queued } = engine.counts();
    if (engine.maxBatch > 1 && active === 0 && queued > 0) await gatherBurst(() => engine!.counts().queued, DEFAULT_BURST_WINDOW, undefined, () => announced);
    let interactive = 0;
    while (!life.stopping && engine.hasWork()) {
      // Interactive requests arriving beside background work are gathered as from idle, so a burst shares one prefill
      // (each prefill step pauses and resumes every background row).
      const c = engine.counts();
      if (c.background && c.interactiveQueued > interactive) await gatherBurst(() => engine!.counts().interactiveQueued, DEFAULT_BURST_WINDOW, undefined, () => announced);
      interactive = engine.counts().interactiveQueued;
      // A step's passes, cache moves and frees touch the device: in this worker's turn there.
      if (profiler) await life.onDevice(() => profiledStep(engine!, runner!));
      else await life.onDevice(() => engine!.step());
      await yieldToEvents();
    }
  } catch (err) {
    // Forward-pass failures are handled per run inside the engine; reaching here means the engine's state is unreliable.
    life.fatal(err);
  } finally {
    looping = false;
    profiler?.flush();
  }
}

async function profiledStep(e: Engine, r: { runMs: number }): Promise<void> {
  const started = performance.now();
  profiler!.begin(started);
  const run0 = r.runMs;
  await e.step();
  const now = performance.now();
  profiler!.end(now, { ...e.lastStep, runMs: r.runMs - run0, stepMs: now - started });
}

/** The cache figures last sent, so a step message carries them only when they changed. */
let sentStats = "";

function stepMessage(deltas: SeqDelta[], finished: SeqFinish[], batch: StepBatch | undefined): FromWorker {
  const msg: FromWorker = batch ? { type: "step", deltas, finished, batch } : { type: "step", deltas, finished };
  const stats = engine?.prefix.stats();
  const json = JSON.stringify(stats);
  if (stats && json !== sentStats) {
    sentStats = json;
    return { ...msg, cache: stats };
  }
  return msg;
}

/** The worker's prefix cache, addressed under the model's identity: its id, weight formats and device. */
function prefixReuse(spec: ModelLoadSpec, runner: ModelRunner<unknown>): PrefixReuse {
  const root = [spec.id, spec.dtype, spec.small ? `${spec.small.dtype}<=${spec.small.maxTokens}` : "", spec.device ?? "cpu"].join("\0");
  const cache = spec.prefixCache ? new PrefixCache(spec.prefixCache.blockTokens, spec.prefixCache.maxBytes) : null;
  return new PrefixReuse(cache, root, runner.readColumns?.bind(runner), runner.passAlign);
}

const life = serveLifecycle<ModelLoadSpec, TextToWorker, FromWorker>({
  async load(spec) {
    const loaded =
      spec.device === "webgpu"
        ? await loadDeviceModel(spec)
        : { ...(await (spec.rows === "right-padded" ? loadGqaCpuModel(spec) : loadModel(spec))), report: { device: "cpu" as const, dtype: spec.dtype } };
    runner = loaded.runner;
    engine = new Engine(loaded.runner, {
      maxBatch: Math.max(1, Math.floor(spec.maxBatch)),
      prefix: prefixReuse(spec, loaded.runner),
      tokenBytes: loaded.tokenBytes,
      takeArrivals: yieldToEvents,
      // Without an end id a constrained answer could never finish: such a model serves unconstrained requests only.
      ...(loaded.eosIds.length ? { constraints: new LazyConstraintSource(loaded.runner.vocabSize, loaded.tokenizerJson, loaded.eosIds) } : {}),
      emit: profiler
        ? (deltas, finished, batch) => {
            const t0 = performance.now();
            life.post(stepMessage(deltas, finished, batch));
            profiler.addPost(performance.now() - t0);
          }
        : (deltas, finished, batch) => life.post(stepMessage(deltas, finished, batch)),
      // A sequence's media finished preprocessing: the loop may have gone idle waiting for it.
      wake: () => void runLoop(),
    });
    return { report: loaded.report, dispose: loaded.dispose };
  },
  counts: () => engine?.counts() ?? { active: 0, queued: 0 },
  onMessage(msg) {
    if (msg.type === "add") {
      if (!engine) {
        const promptTokens = Array.isArray(msg.promptIds) ? msg.promptIds.length : 0;
        life.post({ type: "step", deltas: [], finished: [{ seqId: msg.seqId, reason: "error", promptTokens, outputTokens: 0, message: "model is not loaded" }] });
        return;
      }
      announced = msg.incoming ?? 0;
      engine.add(msg.seqId, msg.promptIds, msg.params, msg.media, msg.prefix, msg.lane);
    } else engine?.cancel(msg.seqId);
    void runLoop();
  },
});
