// The image kind's backend: owns a WorkerSupervisor of image workers (workers/image-worker.ts) and speaks
// render/cancel to them, one held render per image, at most the model's per-pass batch held by one worker at a time.
import type { Failure } from "../models/failures.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { ImageFromWorker, ImageLoadSpec, ImageToWorker, RenderRequest } from "../protocol/image.ts";
import type { SlotView } from "./queue.ts";
import type { RenderBackend, RenderEvent } from "./scheduler.ts";
import { type PoolOptions, WorkerSupervisor } from "./supervisor.ts";

export type ImageWorkers = WorkerSupervisor<ImageLoadSpec, ImageFromWorker, ImageToWorker>;

export interface ImageBackendOptions extends PoolOptions {
  /** ONNX Runtime intra-op threads per worker. */
  threads: number;
  onRendered(jobId: string, image: Omit<RenderEvent, "type">): void;
  /** The worker ended a render with a failure or at a cancel. */
  onRenderEnded(jobId: string, outcome: { failure: Failure } | "cancelled"): void;
}

/** Renders one worker holds at most: the model's UNet rows per pass (guidance halves what one pass takes of them). */
export function rendersPerWorker(model: ModelEntry): number {
  return model.diffusion?.maxBatch ?? 1;
}

export class ImageBackend implements RenderBackend {
  /** A render (one image) holds one unit of the admission budget, as a text sequence does. */
  readonly entryCost = 1;
  readonly workers: ImageWorkers;

  constructor(models: ModelEntry[], opts: ImageBackendOptions) {
    this.workers = new WorkerSupervisor(models, {
      ...opts,
      kind: "image",
      loadSpec: (model) => ({
        id: model.id, dir: model.dir, threads: opts.threads, device: model.placement?.device ?? "cpu", maxBatch: rendersPerWorker(model),
        sizes: model.diffusion!.sizes.map(({ width, height }) => ({ width, height })), textLength: model.diffusion!.textLength,
      }),
      onMessage: (workerId, msg) => {
        // Released before the result is delivered, so the slot freed is visible to the dispatch it triggers.
        this.workers.release(workerId, msg.jobId);
        if (msg.type === "rendered") opts.onRendered(msg.jobId, { rgb: msg.rgb, width: msg.width, height: msg.height, timings: msg.timings });
        else if (msg.type === "render_cancelled") opts.onRenderEnded(msg.jobId, "cancelled");
        else opts.onRenderEnded(msg.jobId, { failure: { cause: msg.retryable ? "render_retryable" : "render_failed", detail: msg.message } });
      },
    });
  }

  slots(): SlotView[] {
    return this.workers.ready().map((w) => ({ workerId: w.workerId, model: w.model.id, free: rendersPerWorker(w.model) - w.held }));
  }

  hasReadyWorker(model: string): boolean {
    return this.workers.hasReadyWorker(model);
  }

  render(workerId: number, jobId: string, render: RenderRequest): void {
    // The init canvas's bytes are copied to the worker (structured clone): the n renders of one edit share them.
    this.workers.assign(workerId, jobId, { type: "render", jobId, render });
  }

  cancel(workerId: number, jobId: string): void {
    this.workers.send(workerId, { type: "cancel", jobId });
  }
}
