// The text kind's backend: owns a WorkerSupervisor of inference workers and speaks add/cancel/step to them, counting batch slots.
import type { ModelEntry } from "../models/registry.ts";
import { rightPaddedOnCpu } from "../models/padding.ts";
import { formatsLabel, smallStepFormat } from "../models/step-formats.ts";
import type { ServiceTier } from "../inference/service-tier.ts";
import { isBackground } from "../protocol/lanes.ts";
import type { MediaInput, ModelLoadSpec, PrefixCacheSpec, PrefixCacheStats, PrefixScope, SamplingParams, SeqDelta, SeqFinish, TextFromWorker, TextToWorker } from "../protocol/text.ts";
import type { Admissions } from "./admissions.ts";
import type { SlotView } from "./queue.ts";
import type { SequenceBackend } from "./scheduler.ts";
import { type PoolOptions, WorkerSupervisor } from "./supervisor.ts";

export type TextWorkers = WorkerSupervisor<ModelLoadSpec, TextFromWorker, TextToWorker>;

export interface TextBackendOptions extends PoolOptions {
  /** ONNX Runtime intra-op threads per worker. */
  threads: number;
  /** Passes of at most this many tokens run on q4 beside an int8 default (src/models/step-formats.ts); 0 or absent: off. */
  smallStepTokens?: number;
  /** Each worker's prefix cache (absent: off), in host memory (a webgpu worker reads its blocks back from the device). */
  prefixCache?: PrefixCacheSpec;
  onStep(deltas: SeqDelta[], finished: SeqFinish[]): void;
  /** What shared a decode pass: rows with media and rows without (the worker's own record). */
  onBatch?(batch: { media: number; text: number }): void;
  /** A worker's prefix-cache figures, cumulative since it started, whenever they changed. */
  onCacheStats?(workerId: number, model: string, stats: PrefixCacheStats): void;
  /** The requests being prepared per model, told to the worker with each add (absent: none are). */
  admissions?: Pick<Admissions, "pending">;
}

/** Rows a webgpu worker batches for a folder that declares no exact batch size (its rows are right-padded there). */
const DEVICE_MAX_BATCH = 8;

/**
 * Most sequences one worker decodes together: on the webgpu device rows are right-padded (GroupQueryAttention's own
 * lengths), so every model batches; on the CPU a format whose graph is GroupQueryAttention is right-padded too; any
 * other model whose left padding is not exact runs one sequence at a time.
 */
export function maxBatchOf(model: ModelEntry): number {
  if (model.batching.leftPadding === "exact") return model.batching.maxBatch;
  if (model.placement?.device === "webgpu") return DEVICE_MAX_BATCH;
  return rightPaddedOnCpu(model) ? model.batching.maxBatch : 1;
}

export class TextBackend implements SequenceBackend {
  /** A sequence holds one unit of the admission budget. */
  readonly entryCost = 1;
  readonly workers: TextWorkers;
  private readonly admissions?: Pick<Admissions, "pending">;

  constructor(models: ModelEntry[], opts: TextBackendOptions) {
    this.admissions = opts.admissions;
    // A multimodal folder's worker runs one decoder format (its encoders and embeddings have no small-step twin).
    // A model on the GPU runs its one GPU format (the small-step twin is a CPU trick).
    // So does a right-padded GroupQueryAttention graph on the CPU (its runner has one session).
    const smallOf = (m: ModelEntry) => (m.media || m.placement?.device === "webgpu" || rightPaddedOnCpu(m) ? undefined : smallStepFormat(m, opts.smallStepTokens ?? 0));
    const dtypeOf = (m: ModelEntry) => m.placement?.dtype ?? m.defaultDtype;
    // The prefix cache lives in host memory, a webgpu worker's too (its blocks are read back from the device).
    const prefixCache = opts.prefixCache ? "on" : "off";
    for (const m of models) {
      opts.logger.info("model weights", { model: m.id, formats: formatsLabel(dtypeOf(m), smallOf(m)), device: m.placement?.device ?? "cpu", prefix_cache: prefixCache });
    }
    this.workers = new WorkerSupervisor(models, {
      ...opts,
      kind: "text",
      loadSpec: (model) => ({
        id: model.id,
        dir: model.dir,
        dtype: dtypeOf(model),
        device: model.placement?.device ?? "cpu",
        small: smallOf(model),
        threads: opts.threads,
        maxBatch: maxBatchOf(model),
        contextLength: model.contextLength,
        ...(rightPaddedOnCpu(model) ? { rows: "right-padded" as const } : {}),
        ...(opts.prefixCache ? { prefixCache: opts.prefixCache } : {}),
      }),
      onMessage: (workerId, msg) => {
        // Released before the step is delivered, so the slots freed are visible to the dispatch it triggers.
        for (const f of msg.finished) this.workers.release(workerId, f.seqId);
        // Counted before the step is delivered, so a client that has its answer finds the cache figures it moved.
        const model = this.workers.modelOf(workerId);
        if (msg.cache && model) opts.onCacheStats?.(workerId, model, msg.cache);
        opts.onStep(msg.deltas, msg.finished);
        if (msg.batch) opts.onBatch?.(msg.batch);
      },
    });
  }

  /**
   * Interactive entries may take every row background ones hold (the worker preempts those for them), so `free`
   * counts interactive rows only; background entries take `spare`, the rows nothing holds.
   */
  slots(): SlotView[] {
    return this.workers.ready().map((w) => {
      const rows = maxBatchOf(w.model);
      return { workerId: w.workerId, model: w.model.id, free: rows - (w.held - w.background), spare: Math.max(0, rows - w.held) };
    });
  }

  hasReadyWorker(model: string): boolean {
    return this.workers.hasReadyWorker(model);
  }

  add(workerId: number, seqId: string, promptIds: number[], params: SamplingParams, media?: MediaInput[], prefix?: PrefixScope, lane?: ServiceTier): void {
    const incoming = this.admissions?.pending(this.workers.modelOf(workerId) ?? "") ?? 0;
    const msg = {
      type: "add" as const, seqId, promptIds, params, ...(media?.length ? { media } : {}), ...(prefix ? { prefix } : {}), ...(lane && lane !== "default" ? { lane } : {}),
      ...(incoming > 0 ? { incoming } : {}),
    };
    this.workers.assign(workerId, seqId, msg, isBackground(lane));
  }

  cancel(workerId: number, seqId: string): void {
    this.workers.send(workerId, { type: "cancel", seqId });
  }
}
