// The main thread's side of the tokenizer worker: one lazily started worker, requests matched by id. A worker that
// dies fails what it held and is replaced on the next request; one that sits on a request past its time bound is
// terminated, that request fails with EncodeTimeout, and the requests queued behind it go to a fresh worker.
import type { EncodeReply, EncodeRequest } from "./tokenizer-protocol.ts";

/** Loading a tokenizer.json, even a large one, takes well under this. */
const BASE_MS = 10_000;
/**
 * 1 ms per 16 UTF-16 units: about 12× the time of the slowest text measured (CJK, ~190k units/s; digits ~380k/s; plain
 * words ~3M/s) on an idle 2-core box, so a busy box does not cut a live encode. A false alarm fails a request that
 * would have worked; a late one only holds a stuck request longer.
 */
const UNITS_PER_MS = 16;

/** How long the worker may take over one text once it is the one the worker is on: a hang bound, not a speed target. */
export function encodeBudgetMs(units: number): number {
  return BASE_MS + Math.ceil(units / UNITS_PER_MS);
}

/** The worker did not answer within the text's budget (src/inference/tokenizer.ts turns it into a 503). */
export class EncodeTimeout extends Error {
  constructor(budgetMs: number, units: number) {
    super(`the tokenizer worker gave no answer within ${budgetMs} ms for a text of ${units} UTF-16 units`);
    this.name = "EncodeTimeout";
  }
}

interface Job {
  id: number;
  dir: string;
  text: string;
  resolve(ids: number[]): void;
  reject(e: Error): void;
}

/** The part of a Bun Worker the encoder uses (a test passes a scripted fake of this shape). */
export interface EncoderWorker {
  postMessage(message: EncodeRequest): void;
  terminate(): void;
  unref(): void;
  onmessage: ((ev: MessageEvent<EncodeReply>) => void) | null;
  onerror: ((ev: ErrorEvent) => void) | null;
}

export interface OffThreadEncoderOptions {
  spawn?: (url: string | URL) => EncoderWorker;
  /** The hang bound for a text of this many UTF-16 units (tests shorten it). */
  budgetMs?: (units: number) => number;
}

export class OffThreadEncoder {
  private worker: EncoderWorker | null = null;
  /** In the order they were posted, which is the order the worker takes them in. */
  private jobs = new Map<number, Job>();
  private nextId = 1;
  /** The one timer: it bounds the oldest job, from when that job became the oldest. */
  private timer: { jobId: number; handle: ReturnType<typeof setTimeout> } | null = null;
  private readonly spawn: (url: string | URL) => EncoderWorker;
  private readonly budgetMs: (units: number) => number;

  constructor(private readonly url: string | URL, opts: OffThreadEncoderOptions = {}) {
    this.spawn = opts.spawn ?? ((u) => new Worker(u));
    this.budgetMs = opts.budgetMs ?? encodeBudgetMs;
  }

  encode(dir: string, text: string): Promise<number[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const job: Job = { id, dir, text, resolve, reject };
      this.jobs.set(id, job);
      this.post(this.start(), job);
      this.arm();
    });
  }

  /** Starts the worker and loads `dir`'s tokenizer in it now, so the first large prompt does not wait for either. */
  warm(dir: string): void {
    this.encode(dir, "").catch(() => {});
  }

  /** Stops the worker; pending encodes fail. */
  close(): void {
    this.fail(new Error("tokenizer worker stopped"));
    this.worker?.terminate();
    this.worker = null;
  }

  private post(worker: EncoderWorker, job: Job): void {
    worker.postMessage({ id: job.id, dir: job.dir, text: job.text } satisfies EncodeRequest);
  }

  private start(): EncoderWorker {
    if (this.worker) return this.worker;
    const worker = this.spawn(this.url);
    // An idle tokenizer worker must not keep the process alive.
    worker.unref();
    worker.onmessage = ({ data }: MessageEvent<EncodeReply>) => {
      const job = this.jobs.get(data.id);
      if (!job) return;
      this.jobs.delete(data.id);
      if ("error" in data) job.reject(new Error(data.error));
      else job.resolve(Array.from(data.ids));
      this.arm();
    };
    worker.onerror = (ev) => {
      // A replaced worker's last words change nothing: its jobs were already moved.
      if (this.worker !== worker) return;
      this.worker = null;
      this.fail(new Error(`tokenizer worker failed: ${ev.message}`));
    };
    this.worker = worker;
    return worker;
  }

  /** Bounds the oldest job; a job keeps its timer until it is answered, so a stuck one cannot renew it. */
  private arm(): void {
    const head = this.jobs.values().next().value;
    if (this.timer && this.timer.jobId === head?.id) return;
    if (this.timer) clearTimeout(this.timer.handle);
    this.timer = null;
    if (!head) return;
    const budget = this.budgetMs(head.text.length);
    const handle = setTimeout(() => this.timedOut(head, budget), budget);
    handle.unref?.();
    this.timer = { jobId: head.id, handle };
  }

  /** The worker is stuck on `job` (a synchronous encode cannot be interrupted): it is terminated and replaced. */
  private timedOut(job: Job, budget: number): void {
    this.timer = null;
    this.jobs.delete(job.id);
    this.worker?.terminate();
    this.worker = null;
    job.reject(new EncodeTimeout(budget, job.text.length));
    if (this.jobs.size) {
      const fresh = this.start();
      for (const j of this.jobs.values()) this.post(fresh, j);
    }
    this.arm();
  }

  private fail(e: Error): void {
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    this.arm();
    for (const j of jobs) j.reject(e);
  }
}
