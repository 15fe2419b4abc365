// The renders a worker holds, in arrival order, and how each one ends (rendered, failed or cancelled).
import type { ImageFromWorker, RenderRequest, RenderTimings } from "../../src/protocol/image.ts";
import type { RowKind } from "./batch-picker.ts";
import type { Denoiser, LatentShape } from "./denoiser.ts";
import type { Embedding } from "./unet-runner.ts";

export type Emit = (msg: ImageFromWorker, transfer?: ArrayBuffer[]) => void;

export interface Job {
  id: string;
  /** Arrival order. */
  seq: number;
  req: RenderRequest;
  shape: LatentShape;
  /** Prompt-id cache keys of its text rows (the unconditional one under guidance). */
  textKeys: Partial<Record<RowKind, string>>;
  embeddings: Partial<Record<RowKind, Embedding>>;
  /** Init-latents cache key (hash of the init bytes and size) for an edit. */
  initKey?: string;
  initLatents?: Float32Array;
  /** Present once its text (and init latents) are ready; done once its last step ran. */
  denoiser?: Denoiser;
  /** This step's outputs so far (guidance rows may land in different passes). */
  outs: Partial<Record<RowKind, Float32Array>>;
  /** Pass number of its last completed step (its arrival's before any): the batch picker's fairness clock. */
  lastServed: number;
  timings: RenderTimings;
  cancelled: boolean;
}

export class JobBoard {
  readonly jobs = new Map<string, Job>();

  constructor(private readonly emit: Emit) {}

  /** Held renders, oldest first (a Map iterates in insertion order). */
  list(): Job[] {
    return [...this.jobs.values()];
  }

  /** Ends a render with a failure, or as cancelled when a cancel for it came in meanwhile. */
  fail(job: Job, retryable: boolean, message: string): void {
    if (!this.jobs.delete(job.id)) return;
    this.emit(job.cancelled ? { type: "render_cancelled", jobId: job.id } : { type: "render_failed", jobId: job.id, retryable, message });
  }

  /** Hands the image over (its buffer is transferred, not copied), unless it was cancelled meanwhile. */
  rendered(job: Job, rgb: Uint8Array): void {
    if (!this.jobs.delete(job.id)) return;
    if (job.cancelled) this.emit({ type: "render_cancelled", jobId: job.id });
    else this.emit({ type: "rendered", jobId: job.id, rgb, width: job.req.width, height: job.req.height, timings: job.timings }, [rgb.buffer as ArrayBuffer]);
  }

  /** Drops every render cancelled since the last pass boundary. */
  dropCancelled(): void {
    for (const job of this.list()) if (job.cancelled) this.fail(job, false, "cancelled");
  }
}
