// The image worker's engine: holds renders as rows and runs one pass at a time (text encoding, VAE encoding, VAE
// decoding, or a UNet pass over a batch of rows at their own steps), so renders join and leave at pass boundaries.
import type { RenderRequest } from "../../src/protocol/image.ts";
import { Denoiser } from "./denoiser.ts";
import { type Emit, type Job, JobBoard } from "./jobs.ts";
import type { DiffusionModel } from "./load-diffusion.ts";
import { Lru } from "./lru.ts";
import { decodePass, encodePass, textPass } from "./prep-passes.ts";
import { latentShapeOf, renderProblem } from "./render-check.ts";
import { buildSchedule, type Schedule } from "./schedule.ts";
import { unetPass } from "./unet-pass.ts";
import type { Embedding } from "./unet-runner.ts";

/** Prompts kept encoded: the empty prompt and a few recent ones (77 × 1024 floats is ~315 KB each). */
const TEXT_CACHE = 32;
/** Init images kept encoded: n renders of one edit, and retries, share one VAE encoding. */
const INIT_CACHE = 8;

export interface EngineOptions {
  maxBatch: number;
  emit: Emit;
}

/** The cache key of an init image: a cryptographic hash, since renders of different clients share the cache. */
export function initKey(rgb: Uint8Array, width: number, height: number): string {
  return `${new Bun.CryptoHasher("sha256").update(rgb).digest("hex")}:${width}x${height}`;
}

export class DiffusionEngine {
  private readonly board: JobBoard;
  private readonly texts = new Lru<string, Embedding>(TEXT_CACHE);
  private readonly inits = new Lru<string, Float32Array>(INIT_CACHE);
  private readonly schedules = new Map<number, Schedule>();
  private readonly maxBatch: number;
  private seq = 0;
  private passes = 0;

  constructor(
    private readonly model: DiffusionModel,
    private readonly opts: EngineOptions,
  ) {
    this.board = new JobBoard(opts.emit);
    this.maxBatch = Math.max(1, Math.floor(opts.maxBatch));
  }

  /** Holds a render, or fails it at once when the model cannot run it. */
  add(jobId: string, req: RenderRequest): void {
    if (this.board.jobs.has(jobId)) {
      this.opts.emit({ type: "render_failed", jobId, retryable: false, message: "a render with this job id is already held" });
      return;
    }
    const problem = renderProblem(req, this.model);
    if (problem) {
      this.opts.emit({ type: "render_failed", jobId, retryable: false, message: problem });
      return;
    }
    const job: Job = {
      id: jobId,
      seq: this.seq++,
      req,
      shape: latentShapeOf(req, this.model),
      textKeys: { cond: req.promptIds.join(","), ...(req.guidance > 1 ? { uncond: req.uncondIds!.join(",") } : {}) },
      embeddings: {},
      ...(req.init ? { initKey: initKey(req.init.rgb, req.width, req.height) } : {}),
      outs: {},
      lastServed: this.passes,
      timings: { textMs: 0, encodeMs: 0, denoiseMs: 0, decodeMs: 0 },
      cancelled: false,
    };
    this.board.jobs.set(jobId, job);
  }

  /** Marks a held render; it is dropped (and answered) at the next pass boundary. Unknown ids are ignored. */
  cancel(jobId: string): void {
    const job = this.board.jobs.get(jobId);
    if (job) job.cancelled = true;
  }

  hasWork(): boolean {
    return this.board.jobs.size > 0;
  }

  /** active: UNet rows of renders denoising or decoding; queued: renders still waiting on text or VAE encoding. */
  counts(): { active: number; queued: number } {
    let active = 0;
    let queued = 0;
    for (const job of this.board.jobs.values()) {
      if (job.denoiser) active += job.denoiser.rows;
      else queued++;
    }
    return { active, queued };
  }

  /** Runs one pass: preparation first (so newcomers join the next UNet pass), then decoding, then denoising. */
  async step(): Promise<void> {
    this.board.dropCancelled();
    for (const job of this.board.list()) this.prepare(job);
    const ran =
      (await textPass(this.board, this.model, this.texts, this.maxBatch)) ||
      (await encodePass(this.board, this.model, this.inits, this.maxBatch)) ||
      (await decodePass(this.board, this.model, this.maxBatch)) ||
      (await unetPass(this.board, this.model, this.maxBatch, ++this.passes));
    // Every held render has a pass it waits on; none running means the bookkeeping is broken.
    if (!ran && this.board.jobs.size > 0) throw new Error(`no pass can run for the ${this.board.jobs.size} held renders`);
    for (const job of this.board.list()) this.prepare(job);
  }

  /** Takes what the caches hold for a waiting render, and starts its denoiser once text and init latents are in. */
  private prepare(job: Job): void {
    if (job.denoiser) return;
    for (const kind of ["cond", "uncond"] as const) {
      const key = job.textKeys[kind];
      if (key !== undefined) job.embeddings[kind] ??= this.texts.get(key);
    }
    if (job.initKey) job.initLatents ??= this.inits.get(job.initKey);
    if (!job.embeddings.cond || (job.textKeys.uncond !== undefined && !job.embeddings.uncond)) return;
    if (job.initKey && !job.initLatents) return;
    const { req } = job;
    job.denoiser = new Denoiser({
      spec: this.model.scheduler,
      schedule: this.scheduleFor(req.steps),
      shape: job.shape,
      seed: req.seed,
      guidance: req.guidance,
      ...(req.init ? { init: { latents: job.initLatents!, strength: req.init.strength, ...(req.init.mask ? { mask: req.init.mask } : {}) } } : {}),
    });
    // It joins the picker's queue now, behind renders that were already waiting.
    job.lastServed = this.passes;
    // The init bytes are not needed once encoded (each render message carries its own copy of them).
    if (req.init) job.req = { ...req, init: { ...req.init, rgb: new Uint8Array(0) } };
  }

  private scheduleFor(steps: number): Schedule {
    let s = this.schedules.get(steps);
    if (!s) {
      s = buildSchedule(this.model.scheduler, steps);
      this.schedules.set(steps, s);
    }
    return s;
  }
}
