// Admission, queueing and dispatch of work onto the backends' workers: generation sequences (text-backend.ts), image
// renders (image-backend.ts) and embedding jobs (embed-backend.ts) share one queue and one admission budget, so
// overload, drain and shutdown treat them alike. One event stream per sequence or render. Worker failures reach the work as fixed-text errors
// (src/models/failures.ts); their detail rides along for the log.
import { ApiError } from "../errors/api-error.ts";
import type { ServiceTier } from "../inference/service-tier.ts";
import { type Failure, failureError, renderFailureError } from "../models/failures.ts";
import { Channel } from "./channel.ts";
import type { RenderRequest, RenderTimings } from "../protocol/image.ts";
import type { MediaInput, PrefixScope, SamplingParams, PromptLogprob, SeqDelta, SeqFinish, TokenLogprob } from "../protocol/text.ts";
import { affinityKey, type NewEntry, RequestQueue, type SlotView } from "./queue.ts";

/** What every backend offers the scheduler: its workers' free slots, whether one is ready, and cancels. */
export interface WorkBackend {
  /** Admission budget units one entry (a sequence, a render) holds. */
  readonly entryCost: number;
  slots(): SlotView[];
  hasReadyWorker(model: string): boolean;
  cancel(workerId: number, id: string): void;
}

/** The backend that runs generation sequences (text-backend.ts; a fake in unit tests). */
export interface SequenceBackend extends WorkBackend {
  add(workerId: number, seqId: string, promptIds: number[], params: SamplingParams, media?: MediaInput[], prefix?: PrefixScope, lane?: ServiceTier): void;
}

/** The backend that renders images (image-backend.ts). */
export interface RenderBackend extends WorkBackend {
  render(workerId: number, jobId: string, render: RenderRequest): void;
}

/** The backend that embeds token rows (embed-backend.ts): one job is one request's inputs. */
export interface EmbedJobBackend extends WorkBackend {
  embed(workerId: number, jobId: string, inputs: number[][]): void;
}

/** A sequence's stream; a sequence the worker ended with an error fails the stream instead of finishing it. */
export type SeqEvent =
  | { type: "delta"; text: string; tokens: number; logprobs?: TokenLogprob[]; promptLogprobs?: PromptLogprob[] }
  | { type: "finish"; finish: SeqFinish };

/** A render's stream: one image, then the end; a cancelled render ends without one; a failed one throws. */
export type RenderEvent = { type: "rendered"; rgb: Uint8Array; width: number; height: number; timings: RenderTimings };

/** An embedding job's stream: its vectors (inputs × dimensions, flattened), then the end; a cancelled job ends without. */
export type EmbedEvent = { type: "embedded"; vectors: Float32Array; dimensions: number };

export interface EmbedSubmission {
  model: string;
  /** Token rows, one per input. */
  inputs: number[][];
  signal?: AbortSignal;
  /** Called synchronously when the job leaves the queue for a worker. */
  onStart?: () => void;
  /** The lane it waits in (absent: default): a batch line's job waits behind interactive ones. */
  lane?: ServiceTier;
}

export interface SeqRequest {
  model: string;
  promptIds: number[];
  params: SamplingParams;
  /** Encoder inputs whose features fill runs of promptIds (a multimodal prompt). */
  media?: MediaInput[];
  /** Who may share its cached prefix (absent: it does not use the prefix cache). */
  prefix?: PrefixScope;
  /** Aborts (client disconnected, time limit): the sequence leaves the batch within one step. */
  signal?: AbortSignal;
  /** Called synchronously when the sequence leaves the queue for a worker slot. */
  onStart?: () => void;
  /** The lane it waits and runs in (absent: default; src/protocol/lanes.ts). */
  lane?: ServiceTier;
}

export interface RenderSubmission {
  model: string;
  render: RenderRequest;
  /** Aborts: a waiting render leaves the queue, a running one is dropped at the worker's next pass. */
  signal?: AbortSignal;
  /** Called synchronously when the render leaves the queue for a worker. */
  onStart?: () => void;
}

type Work =
  | { kind: "seq"; promptIds: number[]; params: SamplingParams; media?: MediaInput[]; prefix?: PrefixScope; channel: Channel<SeqEvent> }
  | { kind: "render"; render: RenderRequest; channel: Channel<RenderEvent> }
  | { kind: "embed"; inputs: number[][]; channel: Channel<EmbedEvent> };

type Pending = Work & { onStart?: () => void };

let workCounter = 0;

export class Scheduler {
  private readonly queue: RequestQueue<Pending>;
  /** Every admitted entry until it ends, by id. */
  private readonly live = new Map<string, Pending>();
  private text: SequenceBackend | null = null;
  private images: RenderBackend | null = null;
  private embeds: EmbedJobBackend | null = null;

  /** `interactiveReserve`: the percentage of `maxQueue` flex and batch work may never hold. */
  constructor(maxQueue: number, interactiveReserve = 0) {
    this.queue = new RequestQueue(maxQueue, interactiveReserve);
  }

  /** The backends call back into the scheduler, so they are attached after both exist. */
  attach(backend: SequenceBackend): void {
    this.text = backend;
  }

  attachRenders(backend: RenderBackend): void {
    this.images = backend;
  }

  attachEmbeds(backend: EmbedJobBackend): void {
    this.embeds = backend;
  }

  load(): { waiting: number; active: number } {
    return this.queue.size;
  }

  /** Entries waiting for a worker slot, by model (models with none are absent). */
  waitingByModel(): Map<string, number> {
    return this.queue.waitingByModel();
  }

  /** Entries waiting for a worker slot, by model and lane. */
  waitingByLane(): { model: string; tier: ServiceTier; depth: number }[] {
    return this.queue.waitingByLane();
  }

  /** Throws 503 backend_unavailable unless a worker for the model is ready. */
  assertServing(model: string): void {
    if (![this.text, this.images, this.embeds].some((b) => b?.hasReadyWorker(model))) {
      throw ApiError.backendUnavailable(`No worker is serving '${model}' right now; retry shortly`);
    }
  }

  /** Admits a group of sequences atomically (n > 1 shares one admission) or throws 503 service_overloaded. */
  submit(requests: SeqRequest[]): AsyncIterable<SeqEvent>[] {
    const works = requests.map((r) => ({ kind: "seq" as const, promptIds: r.promptIds, params: r.params, media: r.media, prefix: r.prefix, channel: new Channel<SeqEvent>() }));
    this.admit(requests, works, this.text);
    return works.map((w) => w.channel);
  }

  /** Admits the renders of one request (its n images) atomically, or throws 503 service_overloaded. */
  submitRenders(requests: RenderSubmission[]): AsyncIterable<RenderEvent>[] {
    const works = requests.map((r) => ({ kind: "render" as const, render: r.render, channel: new Channel<RenderEvent>() }));
    this.admit(requests, works, this.images);
    return works.map((w) => w.channel);
  }

  /** Admits one embedding request's job, or throws 503 service_overloaded. */
  submitEmbeds(request: EmbedSubmission): AsyncIterable<EmbedEvent> {
    const work = { kind: "embed" as const, inputs: request.inputs, channel: new Channel<EmbedEvent>() };
    this.admit([request], [work], this.embeds);
    return work.channel;
  }

  private admit(requests: { model: string; signal?: AbortSignal; onStart?: () => void; lane?: ServiceTier }[], works: Work[], backend: WorkBackend | null): void {
    for (const r of requests) this.assertServing(r.model);
    const cost = backend?.entryCost ?? 1;
    const now = performance.now();
    const group: NewEntry<Pending>[] = requests.map((r, i) => {
      const work = works[i]!;
      const affinity = work.kind === "seq" ? affinityKey(work.prefix?.scope, work.promptIds) : undefined;
      const lane = r.lane && r.lane !== "default" ? { lane: r.lane } : {};
      return { id: `${work.kind}_${++workCounter}`, model: r.model, cost, queuedAt: now, payload: { ...work, onStart: r.onStart }, ...(affinity ? { affinity } : {}), ...lane };
    });
    if (!this.queue.admit(group).ok) throw ApiError.overloaded();
    group.forEach(({ id, payload }, i) => {
      this.live.set(id, payload);
      const signal = requests[i]!.signal;
      if (signal?.aborted) this.cancel(id);
      else signal?.addEventListener("abort", () => this.cancel(id), { once: true });
    });
    this.pump();
  }

  /** Hands waiting entries to free worker slots. Called on submit, on every end, and when a worker is ready. */
  pump(): void {
    const slots = [this.text, this.images, this.embeds].flatMap((b) => b?.slots() ?? []);
    if (!slots.length) return;
    for (const { entry, workerId } of this.queue.dispatch(slots, performance.now())) {
      const work = entry.payload;
      if (work.kind === "seq") this.text!.add(workerId, entry.id, work.promptIds, work.params, work.media, work.prefix, entry.lane);
      else if (work.kind === "render") this.images!.render(workerId, entry.id, work.render);
      else this.embeds!.embed(workerId, entry.id, work.inputs);
      work.onStart?.();
    }
  }

  onStep(deltas: SeqDelta[], finished: SeqFinish[]): void {
    for (const d of deltas) {
      const work = this.live.get(d.seqId);
      if (work?.kind !== "seq" || !(d.text || d.tokens || d.promptLogprobs)) continue;
      work.channel.push({ type: "delta", text: d.text, tokens: d.tokens, ...(d.logprobs ? { logprobs: d.logprobs } : {}), ...(d.promptLogprobs ? { promptLogprobs: d.promptLogprobs } : {}) });
    }
    for (const f of finished) {
      const { work, model } = this.end(f.seqId);
      if (work?.kind !== "seq") continue;
      // The worker's message (engine, ONNX Runtime or constraint text) is detail for the log, never a client's answer.
      if (f.reason === "error") work.channel.fail(failureError({ cause: "generation_failed", detail: f.message ?? "no message" }, model));
      else {
        work.channel.push({ type: "finish", finish: f });
        work.channel.close();
      }
    }
    if (finished.length) this.pump();
  }

  onRendered(jobId: string, image: Omit<RenderEvent, "type">): void {
    const { work } = this.end(jobId);
    if (work?.kind === "render") {
      work.channel.push({ type: "rendered", ...image });
      work.channel.close();
    }
    this.pump();
  }

  /** The worker ended a render with a failure (`retryable`: as the model reported it) or at a cancel. */
  onRenderEnded(jobId: string, outcome: { failure: Failure } | "cancelled"): void {
    const { work, model } = this.end(jobId);
    if (work?.kind === "render") {
      if (outcome === "cancelled") work.channel.close();
      else work.channel.fail(renderFailureError(outcome.failure, model));
    }
    this.pump();
  }

  /** A job's vectors, or (cancelled, failed) its end without them. */
  onEmbedEnded(jobId: string, outcome: Omit<EmbedEvent, "type"> | { failure: Failure } | "cancelled"): void {
    const { work, model } = this.end(jobId);
    if (work?.kind === "embed") {
      if (outcome !== "cancelled" && "failure" in outcome) work.channel.fail(failureError(outcome.failure, model));
      else {
        if (outcome !== "cancelled") work.channel.push({ type: "embedded", ...outcome });
        work.channel.close();
      }
    }
    this.pump();
  }

  onWorkerLost(ids: string[], failure: Failure): void {
    for (const id of ids) {
      const { work, model } = this.end(id);
      work?.channel.fail(errorFor(work, failure, model));
    }
    this.pump();
  }

  /** No worker is left for the model: its waiting entries fail retryably instead of waiting for ever. */
  onUnservable(model: string, failure: Failure): void {
    for (const id of this.queue.waitingFor(model)) {
      this.queue.cancel(id);
      const work = this.live.get(id);
      this.live.delete(id);
      work?.channel.fail(errorFor(work, failure, model));
    }
  }

  /** Fails every entry still waiting or running (shutdown). */
  failAll(error: ApiError): void {
    for (const [id, work] of this.live) {
      this.queue.cancel(id);
      this.queue.finish(id);
      work.channel.fail(error);
    }
    this.live.clear();
  }

  /** Removes an entry that ended: its budget is freed and its stream is the caller's to end. */
  private end(id: string): { work: Pending | undefined; model: string } {
    const entry = this.queue.finish(id);
    const work = this.live.get(id);
    this.live.delete(id);
    return { work, model: entry?.model ?? "" };
  }

  private cancel(id: string): void {
    const held = this.queue.cancel(id);
    const work = this.live.get(id);
    if (held) {
      (work?.kind === "render" ? this.images : work?.kind === "embed" ? this.embeds : this.text)?.cancel(held.workerId, id);
      return;
    }
    // Never dispatched: it ends here, and no worker hears of it.
    this.live.delete(id);
    if (work?.kind === "seq") work.channel.push({ type: "finish", finish: { seqId: id, reason: "cancelled", promptTokens: 0, outputTokens: 0 } });
    work?.channel.close();
  }
}

/** What a failure answers for this kind of work: renders have their own mapping (src/models/failures.ts). */
function errorFor(work: Pending | undefined, failure: Failure, model: string): ApiError {
  return work?.kind === "render" ? renderFailureError(failure, model) : failureError(failure, model);
}
