// The embedding worker's batching: the rows of every job it holds wait in arrival order, and each run takes as many
// as fit the padded-token budget, whoever sent them, so requests from many clients share ONNX runs. A row's vector
// does not depend on what shared its run beyond float32 rounding (right padding, masked attention, pooling in float64).
import type { EmbedFromWorker, PoolingMode } from "../../src/protocol/embed.ts";
import { rowsThatFit } from "./batch-inputs.ts";
import type { EncoderRunner } from "./encoder-runner.ts";
import { normalize, poolRow } from "./pooling.ts";

interface Job {
  id: string;
  inputs: number[][];
  /** inputs.length × dims, filled as rows finish. */
  vectors: Float32Array;
  /** The next input not yet taken by a run. */
  next: number;
  /** Inputs whose vectors are written. */
  done: number;
}

export interface EmbedEngineOptions {
  pooling: PoolingMode;
  normalize: boolean;
  dimensions: number;
  maxBatchTokens: number;
  emit(msg: EmbedFromWorker, transfer?: ArrayBuffer[]): void;
}

export class EmbedEngine {
  private jobs: Job[] = [];

  constructor(private readonly runner: EncoderRunner, private readonly opts: EmbedEngineOptions) {}

  add(jobId: string, inputs: number[][]): void {
    if (!Array.isArray(inputs) || !inputs.length || inputs.some((r) => !Array.isArray(r) || !r.length)) throw new Error("an embed job needs non-empty token rows");
    this.jobs.push({ id: jobId, inputs, vectors: new Float32Array(inputs.length * this.opts.dimensions), next: 0, done: 0 });
  }

  /** Drops a job; a run already under way finishes without it. */
  cancel(jobId: string): void {
    const before = this.jobs.length;
    this.jobs = this.jobs.filter((j) => j.id !== jobId);
    if (this.jobs.length < before) this.opts.emit({ type: "embed_cancelled", jobId });
  }

  hasWork(): boolean {
    return this.jobs.some((j) => j.next < j.inputs.length);
  }

  counts(): { active: number; queued: number } {
    const active = this.jobs.filter((j) => j.next > 0).length;
    return { active, queued: this.jobs.length - active };
  }

  /** One run: the waiting rows that fit, pooled into their jobs; jobs whose last row this was are answered. */
  async step(): Promise<void> {
    const taken = this.take();
    if (!taken.length) return;
    let out;
    try {
      out = await this.runner.run(taken.map(({ job, index }) => job.inputs[index]!));
    } catch (err) {
      // The run's failure is each of its jobs' failure: they leave, and the rest carry on.
      const failed = new Set(taken.map((t) => t.job));
      this.jobs = this.jobs.filter((j) => !failed.has(j));
      for (const job of failed) this.opts.emit({ type: "embed_failed", jobId: job.id, message: err instanceof Error ? err.message : String(err) });
      return;
    }
    const { dimensions, pooling } = this.opts;
    taken.forEach(({ job, index }, b) => {
      const v = poolRow(out.hidden, b, out.seq, dimensions, out.lengths[b]!, pooling);
      job.vectors.set(this.opts.normalize ? normalize(v) : v, index * dimensions);
      job.done++;
    });
    for (const job of new Set(taken.map((t) => t.job))) {
      // A job cancelled while its rows ran is no longer held: nothing is answered for it.
      if (job.done < job.inputs.length || !this.jobs.includes(job)) continue;
      this.jobs = this.jobs.filter((j) => j !== job);
      this.opts.emit({ type: "embedded", jobId: job.id, vectors: job.vectors, dimensions }, [job.vectors.buffer as ArrayBuffer]);
    }
  }

  /** The next run's rows, oldest first, within the padded-token budget. */
  private take(): { job: Job; index: number }[] {
    const waiting: { job: Job; index: number }[] = [];
    for (const job of this.jobs) for (let i = job.next; i < job.inputs.length; i++) waiting.push({ job, index: i });
    const taken = waiting.slice(0, rowsThatFit(waiting.map(({ job, index }) => job.inputs[index]!.length), this.opts.maxBatchTokens));
    for (const { job } of taken) job.next++;
    return taken;
  }
}
