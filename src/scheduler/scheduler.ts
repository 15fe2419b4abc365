// Admission, queueing and dispatch of generation sequences onto the worker pool; one stream of deltas per sequence.
import { ApiError } from "../errors/api-error.ts";
import { Channel } from "./channel.ts";
import type { WorkerPool } from "./pool.ts";
import type { SamplingParams, SeqDelta, SeqFinish } from "./protocol.ts";
import { RequestQueue } from "./queue.ts";

export type SeqEvent = { type: "delta"; text: string; tokens: number } | { type: "finish"; finish: SeqFinish };

export interface SeqRequest {
  model: string;
  promptIds: number[];
  params: SamplingParams;
  /** Aborts (client disconnected, time limit): the sequence leaves the batch within one step. */
  signal?: AbortSignal;
}

interface Pending {
  promptIds: number[];
  params: SamplingParams;
  channel: Channel<SeqEvent>;
}

let seqCounter = 0;

export class Scheduler {
  private readonly queue: RequestQueue<Pending>;
  private readonly sinks = new Map<string, Channel<SeqEvent>>();
  private pool: WorkerPool | null = null;

  constructor(maxQueue: number) {
    this.queue = new RequestQueue(maxQueue);
  }

  /** The pool calls back into the scheduler, so it is attached after both exist. */
  attach(pool: WorkerPool): void {
    this.pool = pool;
  }

  load(): { waiting: number; active: number } {
    return this.queue.size;
  }

  /** Throws 503 backend_unavailable unless a worker for the model is ready. */
  assertServing(model: string): void {
    if (!this.pool?.hasReadyWorker(model)) throw ApiError.backendUnavailable(`No worker is serving '${model}' right now; retry shortly`);
  }

  /** Admits a group of sequences atomically (n > 1 shares one admission) or throws 503 service_overloaded. */
  submit(requests: SeqRequest[]): AsyncIterable<SeqEvent>[] {
    for (const r of requests) this.assertServing(r.model);
    if (this.queue.room() < requests.length) throw ApiError.overloaded();
    const streams = requests.map((r) => {
      const id = `seq_${++seqCounter}`;
      const channel = new Channel<SeqEvent>();
      this.queue.admit({ id, model: r.model, payload: { promptIds: r.promptIds, params: r.params, channel }, queuedAt: performance.now() });
      this.sinks.set(id, channel);
      if (r.signal) {
        if (r.signal.aborted) this.cancel(id);
        else r.signal.addEventListener("abort", () => this.cancel(id), { once: true });
      }
      return channel;
    });
    this.pump();
    return streams;
  }

  /** Hands waiting sequences to free worker slots. Called on submit, on every finish, and when a worker is ready. */
  pump(): void {
    if (!this.pool) return;
    for (const { entry, workerId } of this.queue.dispatch(this.pool.slots(), performance.now())) {
      this.pool.add(workerId, entry.id, entry.payload.promptIds, entry.payload.params);
    }
  }

  onStep(deltas: SeqDelta[], finished: SeqFinish[]): void {
    for (const d of deltas) {
      if (d.text || d.tokens) this.sinks.get(d.seqId)?.push({ type: "delta", text: d.text, tokens: d.tokens });
    }
    for (const f of finished) {
      this.queue.finish(f.seqId);
      const sink = this.sinks.get(f.seqId);
      this.sinks.delete(f.seqId);
      if (!sink) continue;
      sink.push({ type: "finish", finish: f });
      sink.close();
    }
    if (finished.length) this.pump();
  }

  onWorkerLost(seqIds: string[], reason: string): void {
    for (const id of seqIds) {
      this.queue.finish(id);
      const sink = this.sinks.get(id);
      this.sinks.delete(id);
      sink?.fail(ApiError.backendUnavailable(`The model worker serving this request stopped (${reason}); retry the request`));
    }
    this.pump();
  }

  /** Fails every sequence still waiting or running (shutdown). */
  failAll(error: ApiError): void {
    for (const [id, sink] of this.sinks) {
      this.queue.cancel(id);
      this.queue.finish(id);
      sink.fail(error);
    }
    this.sinks.clear();
  }

  private cancel(id: string): void {
    const held = this.queue.cancel(id);
    if (held) {
      this.pool?.cancel(held.workerId, id);
      return;
    }
    // Never dispatched: it ends here, and no worker hears of it.
    const sink = this.sinks.get(id);
    this.sinks.delete(id);
    sink?.push({ type: "finish", finish: { seqId: id, reason: "cancelled", promptTokens: 0, outputTokens: 0 } });
    sink?.close();
  }
}
