// The embedding kind's backend: owns a WorkerSupervisor of embedding workers (workers/embed-worker.ts) and speaks
// embed/cancel to them. One request is one job; a worker holds many at once and batches their rows into shared runs,
// so its slots are jobs, not rows.
import type { Failure } from "../models/failures.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { EmbedFromWorker, EmbedLoadSpec, EmbedToWorker } from "../protocol/embed.ts";
import { onnxFileForDtype } from "../models/manifest.ts";
import type { SlotView } from "./queue.ts";
import type { EmbedEvent, EmbedJobBackend } from "./scheduler.ts";
import { type PoolOptions, WorkerSupervisor } from "./supervisor.ts";

export type EmbedWorkers = WorkerSupervisor<EmbedLoadSpec, EmbedFromWorker, EmbedToWorker>;

/** Jobs one worker holds at once: enough that 16 clients' requests all reach the worker's next run. */
export const JOBS_PER_WORKER = 64;
/** Padded tokens per run (rows × longest row): a few runs' worth of a small encoder's work, bounded in memory. */
export const MAX_BATCH_TOKENS = 16_384;

export interface EmbedBackendOptions extends PoolOptions {
  /** ONNX Runtime intra-op threads per worker. */
  threads: number;
  /** The worker ended a job: its vectors, a failure, or a cancel. */
  onEnded(jobId: string, outcome: Omit<EmbedEvent, "type"> | { failure: Failure } | "cancelled"): void;
}

/** What a worker is told to load for an embedding model. */
export function embedLoadSpec(model: ModelEntry, threads: number): EmbedLoadSpec {
  const layout = model.embedding!;
  return {
    id: model.id, dir: model.dir, graph: onnxFileForDtype(model.defaultDtype)!, dtype: model.defaultDtype, threads,
    pooling: layout.pooling, normalize: layout.normalize, dimensions: layout.dimensions,
    maxBatchTokens: Math.max(MAX_BATCH_TOKENS, model.contextLength),
  };
}

export class EmbedBackend implements EmbedJobBackend {
  /** A job holds one unit of the admission budget, as a text sequence does. */
  readonly entryCost = 1;
  readonly workers: EmbedWorkers;

  constructor(models: ModelEntry[], opts: EmbedBackendOptions) {
    this.workers = new WorkerSupervisor(models, {
      ...opts,
      kind: "embed",
      loadSpec: (model) => embedLoadSpec(model, opts.threads),
      onMessage: (workerId, msg) => {
        // Released before the result is delivered, so the slot freed is visible to the dispatch it triggers.
        this.workers.release(workerId, msg.jobId);
        if (msg.type === "embedded") opts.onEnded(msg.jobId, { vectors: msg.vectors, dimensions: msg.dimensions });
        else if (msg.type === "embed_cancelled") opts.onEnded(msg.jobId, "cancelled");
        else opts.onEnded(msg.jobId, { failure: { cause: "generation_failed", detail: msg.message } });
      },
    });
  }

  slots(): SlotView[] {
    return this.workers.ready().map((w) => ({ workerId: w.workerId, model: w.model.id, free: JOBS_PER_WORKER - w.held }));
  }

  hasReadyWorker(model: string): boolean {
    return this.workers.hasReadyWorker(model);
  }

  embed(workerId: number, jobId: string, inputs: number[][]): void {
    this.workers.assign(workerId, jobId, { type: "embed", jobId, inputs });
  }

  cancel(workerId: number, jobId: string): void {
    this.workers.send(workerId, { type: "cancel", jobId });
  }
}
