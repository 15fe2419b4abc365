// Test helper: drives a real inference worker over the scheduler protocol and gathers each sequence's stream.
import type { FromWorker, MediaInput, SamplingParams, SeqFinish, ToWorker } from "../../src/protocol/text.ts";
import { greedyParams } from "../helpers/sampling.ts";

export const WORKER_URL = new URL("../../workers/inference-worker.ts", import.meta.url);

export interface SeqResult {
  text: string;
  /** Number of step messages that carried a delta for the sequence. */
  steps: number;
  finish: SeqFinish;
}

export const params = greedyParams;

export class WorkerClient {
  readonly worker: Worker;
  /** Every step message in arrival order. */
  readonly steps: Extract<FromWorker, { type: "step" }>[] = [];
  private readonly texts = new Map<string, { text: string; steps: number }>();
  private readonly waiters = new Map<string, (r: SeqResult) => void>();
  private readonly listeners: ((msg: FromWorker) => void)[] = [];

  constructor() {
    this.worker = new Worker(WORKER_URL);
    this.worker.onmessage = (ev: MessageEvent<FromWorker>) => {
      const msg = ev.data;
      if (msg.type === "step") {
        this.steps.push(msg);
        for (const d of msg.deltas) {
          const t = this.texts.get(d.seqId) ?? { text: "", steps: 0 };
          t.text += d.text;
          t.steps++;
          this.texts.set(d.seqId, t);
        }
        for (const f of msg.finished) {
          const t = this.texts.get(f.seqId) ?? { text: "", steps: 0 };
          this.waiters.get(f.seqId)?.({ ...t, finish: f });
          this.waiters.delete(f.seqId);
        }
      }
      for (const l of [...this.listeners]) l(msg);
    };
  }

  post(msg: ToWorker): void {
    this.worker.postMessage(msg);
  }

  /** Resolves with the first message of the given type. */
  next<T extends FromWorker["type"]>(type: T): Promise<Extract<FromWorker, { type: T }>> {
    return new Promise((resolve) => {
      const l = (msg: FromWorker) => {
        if (msg.type !== type) return;
        this.listeners.splice(this.listeners.indexOf(l), 1);
        resolve(msg as Extract<FromWorker, { type: T }>);
      };
      this.listeners.push(l);
    });
  }

  async load(dir: string, maxBatch: number, threads = 1): Promise<Extract<FromWorker, { type: "loaded" | "load_error" }>> {
    const done = Promise.race([this.next("loaded"), this.next("load_error")]);
    this.post({ type: "load", model: { id: "kiln-tiny-v1", dir, dtype: "fp32", threads, maxBatch } });
    return done;
  }

  /** Sends an add (with its images and clips, if any) and resolves when the sequence finishes. */
  add(seqId: string, promptIds: number[], p: SamplingParams, media?: MediaInput[]): Promise<SeqResult> {
    const done = new Promise<SeqResult>((resolve) => this.waiters.set(seqId, resolve));
    this.post({ type: "add", seqId, promptIds, params: p, ...(media ? { media } : {}) });
    return done;
  }

  /** Text received so far for a sequence. */
  textOf(seqId: string): string {
    return this.texts.get(seqId)?.text ?? "";
  }

  async ping(): Promise<Extract<FromWorker, { type: "pong" }>> {
    const pong = this.next("pong");
    this.post({ type: "ping", nonce: 7 });
    return pong;
  }

  /** Asks the worker to shut down and resolves when its thread has exited. */
  shutdown(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.worker.addEventListener("close", () => resolve(), { once: true }));
    this.post({ type: "shutdown" });
    return closed;
  }
}
