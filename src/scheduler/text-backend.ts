// The text kind's backend: owns a WorkerSupervisor of inference workers and speaks add/cancel/step to them, counting batch slots.
import type { Logger } from "../log/logger.ts";
import type { HealthCause } from "../models/failures.ts";
import type { Health, ModelEntry } from "../models/registry.ts";
import { formatsLabel, smallStepFormat } from "../models/step-formats.ts";
import type { MediaInput, ModelLoadSpec, SamplingParams, SeqDelta, SeqFinish, TextFromWorker, TextToWorker } from "./protocol.ts";
import type { SlotView } from "./queue.ts";
import type { SequenceBackend } from "./scheduler.ts";
import { type SupervisedWorker, type WorkerFailure, WorkerSupervisor } from "./supervisor.ts";

export type TextWorkers = WorkerSupervisor<ModelLoadSpec, TextFromWorker, TextToWorker>;

export interface TextBackendOptions {
  workerUrl: string | URL;
  workersPerModel: number;
  /** ONNX Runtime intra-op threads per worker. */
  threads: number;
  /** Passes of at most this many tokens run on q4 beside an int8 default (src/models/step-formats.ts); 0 or absent: off. */
  smallStepTokens?: number;
  logger: Logger;
  hangTimeoutMs?: number;
  loadTimeoutMs?: number;
  pingIntervalMs?: number;
  spawnWorker?: (url: string | URL) => SupervisedWorker;
  onStep(deltas: SeqDelta[], finished: SeqFinish[]): void;
  /** What shared a decode pass: rows with media and rows without (the worker's own record). */
  onBatch?(batch: { media: number; text: number }): void;
  /** A worker died or hung: these sequences are lost (the caller fails them as retryable). */
  onLost(seqIds: string[], failure: WorkerFailure): void;
  onHealth(model: string, status: Health, cause: HealthCause | null): void;
  onReady(): void;
  /** No worker is left for the model: sequences waiting for it can never run. */
  onUnservable(model: string, failure: WorkerFailure): void;
  /** A worker was replaced after a crash, hang or failure. */
  onRestart?(model: string, failure: WorkerFailure): void;
}

/** Most sequences one worker decodes together: a model whose left padding is not exact runs one at a time. */
export function maxBatchOf(model: ModelEntry): number {
  return model.batching.leftPadding === "exact" ? model.batching.maxBatch : 1;
}

export class TextBackend implements SequenceBackend {
  /** A sequence holds one unit of the admission budget. */
  readonly entryCost = 1;
  readonly workers: TextWorkers;

  constructor(models: ModelEntry[], opts: TextBackendOptions) {
    // A multimodal folder's worker runs one decoder format (its encoders and embeddings have no small-step twin).
    const smallOf = (m: ModelEntry) => (m.media ? undefined : smallStepFormat(m, opts.smallStepTokens ?? 0));
    for (const m of models) opts.logger.info("model weights", { model: m.id, formats: formatsLabel(m.defaultDtype, smallOf(m)) });
    this.workers = new WorkerSupervisor(models, {
      kind: "text",
      workerUrl: opts.workerUrl,
      workersPerModel: opts.workersPerModel,
      logger: opts.logger,
      hangTimeoutMs: opts.hangTimeoutMs,
      loadTimeoutMs: opts.loadTimeoutMs,
      pingIntervalMs: opts.pingIntervalMs,
      spawnWorker: opts.spawnWorker,
      loadSpec: (model) => ({
        id: model.id,
        dir: model.dir,
        dtype: model.defaultDtype,
        small: smallOf(model),
        threads: opts.threads,
        maxBatch: maxBatchOf(model),
      }),
      onMessage: (workerId, msg) => {
        // Released before the step is delivered, so the slots freed are visible to the dispatch it triggers.
        for (const f of msg.finished) this.workers.release(workerId, f.seqId);
        opts.onStep(msg.deltas, msg.finished);
        if (msg.batch) opts.onBatch?.(msg.batch);
      },
      onLost: opts.onLost,
      onHealth: opts.onHealth,
      onReady: opts.onReady,
      onUnservable: opts.onUnservable,
      onRestart: opts.onRestart,
    });
  }

  slots(): SlotView[] {
    return this.workers.ready().map((w) => ({ workerId: w.workerId, model: w.model.id, free: maxBatchOf(w.model) - w.held }));
  }

  hasReadyWorker(model: string): boolean {
    return this.workers.hasReadyWorker(model);
  }

  add(workerId: number, seqId: string, promptIds: number[], params: SamplingParams, media?: MediaInput[]): void {
    this.workers.assign(workerId, seqId, { type: "add", seqId, promptIds, params, ...(media?.length ? { media } : {}) });
  }

  cancel(workerId: number, seqId: string): void {
    this.workers.send(workerId, { type: "cancel", seqId });
  }
}
