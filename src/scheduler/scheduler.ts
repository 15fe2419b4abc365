// Admission, queueing and dispatch of generation sequences onto a backend's workers; one stream of deltas per sequence.
// Worker failures reach a sequence as fixed-text errors (src/models/failures.ts); their detail rides along for the log.
import { ApiError } from "../errors/api-error.ts";
import { type Failure, failureError } from "../models/failures.ts";
import { Channel } from "./channel.ts";
import type { MediaInput, SamplingParams, SeqDelta, SeqFinish } from "./protocol.ts";
import { type NewEntry, RequestQueue, type SlotView } from "./queue.ts";

/** What the scheduler needs from the backend that runs sequences (text-backend.ts; a fake in unit tests). */
export interface SequenceBackend {
  /** Admission budget units one sequence holds. */
  readonly entryCost: number;
  slots(): SlotView[];
  hasReadyWorker(model: string): boolean;
  add(workerId: number, seqId: string, promptIds: number[], params: SamplingParams, media?: MediaInput[]): void;
  cancel(workerId: number, seqId: string): void;
}

/** A sequence's stream; a sequence the worker ended with an error fails the stream instead of finishing it. */
export type SeqEvent = { type: "delta"; text: string; tokens: number } | { type: "finish"; finish: SeqFinish };

export interface SeqRequest {
  model: string;
  promptIds: number[];
  params: SamplingParams;
  /** Encoder inputs whose features fill runs of promptIds (a multimodal prompt). */
  media?: MediaInput[];
  /** Aborts (client disconnected, time limit): the sequence leaves the batch within one step. */
  signal?: AbortSignal;
  /** Called synchronously when the sequence leaves the queue for a worker slot. */
  onStart?: () => void;
}

interface Pending {
  promptIds: number[];
  params: SamplingParams;
  media?: MediaInput[];
  channel: Channel<SeqEvent>;
  onStart?: () => void;
}

let seqCounter = 0;

export class Scheduler {
  private readonly queue: RequestQueue<Pending>;
  private readonly sinks = new Map<string, Channel<SeqEvent>>();
  private backend: SequenceBackend | null = null;

  constructor(maxQueue: number) {
    this.queue = new RequestQueue(maxQueue);
  }

  /** The backend calls back into the scheduler, so it is attached after both exist. */
  attach(backend: SequenceBackend): void {
    this.backend = backend;
  }

  load(): { waiting: number; active: number } {
    return this.queue.size;
  }

  /** Sequences waiting for a worker slot, by model (models with none are absent). */
  waitingByModel(): Map<string, number> {
    return this.queue.waitingByModel();
  }

  /** Throws 503 backend_unavailable unless a worker for the model is ready. */
  assertServing(model: string): void {
    if (!this.backend?.hasReadyWorker(model)) throw ApiError.backendUnavailable(`No worker is serving '${model}' right now; retry shortly`);
  }

  /** Admits a group of sequences atomically (n > 1 shares one admission) or throws 503 service_overloaded. */
  submit(requests: SeqRequest[]): AsyncIterable<SeqEvent>[] {
    for (const r of requests) this.assertServing(r.model);
    const cost = this.backend?.entryCost ?? 1;
    const now = performance.now();
    const group: NewEntry<Pending>[] = requests.map((r) => ({
      id: `seq_${++seqCounter}`, model: r.model, cost, queuedAt: now, payload: { promptIds: r.promptIds, params: r.params, media: r.media, channel: new Channel<SeqEvent>(), onStart: r.onStart },
    }));
    if (!this.queue.admit(group).ok) throw ApiError.overloaded();
    group.forEach(({ id, payload }, i) => {
      this.sinks.set(id, payload.channel);
      const signal = requests[i]!.signal;
      if (signal?.aborted) this.cancel(id);
      else signal?.addEventListener("abort", () => this.cancel(id), { once: true });
    });
    this.pump();
    return group.map((e) => e.payload.channel);
  }

  /** Hands waiting sequences to free worker slots. Called on submit, on every finish, and when a worker is ready. */
  pump(): void {
    if (!this.backend) return;
    for (const { entry, workerId } of this.queue.dispatch(this.backend.slots(), performance.now())) {
      this.backend.add(workerId, entry.id, entry.payload.promptIds, entry.payload.params, entry.payload.media);
      entry.payload.onStart?.();
    }
  }

  onStep(deltas: SeqDelta[], finished: SeqFinish[]): void {
    for (const d of deltas) {
      if (d.text || d.tokens) this.sinks.get(d.seqId)?.push({ type: "delta", text: d.text, tokens: d.tokens });
    }
    for (const f of finished) {
      const entry = this.queue.finish(f.seqId);
      const sink = this.sinks.get(f.seqId);
      this.sinks.delete(f.seqId);
      if (!sink) continue;
      // The worker's message (engine, ONNX Runtime or constraint text) is detail for the log, never a client's answer.
      if (f.reason === "error") sink.fail(failureError({ cause: "generation_failed", detail: f.message ?? "no message" }, entry?.model ?? ""));
      else {
        sink.push({ type: "finish", finish: f });
        sink.close();
      }
    }
    if (finished.length) this.pump();
  }

  onWorkerLost(seqIds: string[], failure: Failure): void {
    for (const id of seqIds) {
      const entry = this.queue.finish(id);
      const sink = this.sinks.get(id);
      this.sinks.delete(id);
      sink?.fail(failureError(failure, entry?.model ?? ""));
    }
    this.pump();
  }

  /** No worker is left for the model: its waiting sequences fail retryably instead of waiting for ever. */
  onUnservable(model: string, failure: Failure): void {
    for (const id of this.queue.waitingFor(model)) {
      this.queue.cancel(id);
      const sink = this.sinks.get(id);
      this.sinks.delete(id);
      sink?.fail(failureError(failure, model));
    }
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
      this.backend?.cancel(held.workerId, id);
      return;
    }
    // Never dispatched: it ends here, and no worker hears of it.
    const sink = this.sinks.get(id);
    this.sinks.delete(id);
    sink?.push({ type: "finish", finish: { seqId: id, reason: "cancelled", promptTokens: 0, outputTokens: 0 } });
    sink?.close();
  }
}
