// The media decoder: a small pool of worker threads that decode off the event loop, each decode time-capped, a wedged or crashed worker replaced.
import type { Config } from "../../config.ts";
import { ApiError } from "../../errors/api-error.ts";
import type { Logger } from "../../log/logger.ts";
import { WORKER_ENTRIES, workerEntryUrl } from "../../native/worker-url.ts";
import { MediaDecodeError } from "../types.ts";
import type { DecodedMedia } from "../../inference/media.ts";
import { describe, failures } from "./failures.ts";
import type { DecodeLimits } from "./limits.ts";
import { precheck, type Want } from "./precheck.ts";
import type { DecodeReply, DecodeRequest } from "./protocol.ts";

export type { Want } from "./precheck.ts";

export interface MediaDecoder {
  /**
   * Decodes `bytes` as `want` asks (`any`: as whatever they are). Takes ownership of `bytes`: their buffer is
   * transferred to a worker (an image comes back as `DecodedImage.bytes`), so keep a copy if you need them after.
   * Rejects with MediaDecodeError naming the reason, with `signal.reason` when aborted, or with ApiError 503
   * `service_overloaded` when every worker is busy and `mediaMaxQueue` decodes already wait.
   */
  decode(bytes: Uint8Array, want: Want, signal?: AbortSignal): Promise<DecodedMedia>;
  /** Fails queued decodes, stops the workers. */
  close(): Promise<void>;
  /** Workers running, decodes running and waiting, and workers replaced so far (crashed, wedged or aborted under a decode). */
  stats(): { workers: number; busy: number; queued: number; replaced: number };
}

/** The config options the decoder reads. */
export type MediaDecodeConfig = Pick<
  Config,
  "mediaWorkers" | "mediaMaxQueue" | "mediaDecodeTimeoutMs" | "mediaMaxPixels" | "mediaMaxAudioS" | "mediaMaxVideoS" | "videoFps" | "videoMaxFrames" | "videoFrameSize"
>;

export function decodeLimits(c: MediaDecodeConfig): DecodeLimits {
  return {
    maxPixels: c.mediaMaxPixels,
    maxAudioS: c.mediaMaxAudioS,
    maxVideoS: c.mediaMaxVideoS,
    videoFps: c.videoFps,
    videoMaxFrames: c.videoMaxFrames,
    videoFrameSize: c.videoFrameSize,
  };
}

interface Job {
  id: number;
  bytes: Uint8Array;
  want: Want;
  /** "mp4 video": what the failure messages of a crash or a time-out call the input. */
  what: string;
  resolve(media: DecodedMedia): void;
  reject(e: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker | null;
  job: Job | null;
  timer: ReturnType<typeof setTimeout> | null;
}

/** The whole view, alone in a buffer of its own: a view into a larger or shared buffer is copied, never handed over whole. */
function ownBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const whole = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return whole ? (bytes as Uint8Array<ArrayBuffer>) : bytes.slice();
}

export function createMediaDecoder(config: MediaDecodeConfig, opts: { logger?: Logger; workerUrl?: string | URL } = {}): MediaDecoder {
  const limits = decodeLimits(config);
  const workerUrl = opts.workerUrl ?? workerEntryUrl(WORKER_ENTRIES.media);
  const slots: Slot[] = Array.from({ length: config.mediaWorkers }, () => ({ worker: null, job: null, timer: null }));
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;
  let replaced = 0;

  const settle = (job: Job) => {
    if (job.onAbort) job.signal?.removeEventListener("abort", job.onAbort);
  };

  /** Ends the slot's current decode: its worker is kept for the next one unless `kill`. */
  const finish = (slot: Slot, kill: boolean) => {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    if (slot.job) settle(slot.job);
    slot.job = null;
    if (kill && slot.worker) {
      const worker = slot.worker;
      slot.worker = null;
      if (!closed) replaced++;
      worker.terminate();
    }
    pump();
  };

  /** The worker died, hung or was stopped under a decode: that decode fails as undecodable, a fresh worker takes the next. */
  const lose = (slot: Slot, worker: Worker, cause: string) => {
    if (slot.worker !== worker) return;
    const job = slot.job;
    if (job) opts.logger?.warn("media decode lost its worker; replacing it", { cause, input: job.what });
    finish(slot, true);
    job?.reject(failures.undecodable(job.what));
  };

  const onReply = (slot: Slot, worker: Worker, reply: DecodeReply) => {
    const job = slot.job;
    if (slot.worker !== worker || !job || reply.id !== job.id) return;
    finish(slot, false);
    if (reply.ok) job.resolve(reply.media);
    else if (reply.detail !== undefined) {
      opts.logger?.warn("media decoder failed on an input", { detail: reply.detail, input: job.what });
      job.reject(failures.undecodable(job.what));
    } else job.reject(new MediaDecodeError(reply.reason, reply.message));
  };

  const spawn = (slot: Slot): Worker => {
    const worker = new Worker(workerUrl);
    worker.onmessage = (e: MessageEvent<DecodeReply>) => onReply(slot, worker, e.data);
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      lose(slot, worker, `error: ${e.message}`);
    };
    worker.addEventListener("close", () => lose(slot, worker, "the worker exited"));
    // An idle decoder does not keep the process alive; a running decode's time-limit timer does.
    worker.unref();
    return worker;
  };

  const start = (slot: Slot, job: Job) => {
    const worker = (slot.worker ??= spawn(slot));
    slot.job = job;
    const bytes = ownBuffer(job.bytes);
    const request: DecodeRequest = { id: job.id, bytes, want: job.want, limits };
    worker.postMessage(request, [bytes.buffer]);
    slot.timer = setTimeout(() => {
      opts.logger?.warn("media decode ran past its time limit; replacing its worker", { timeout_ms: config.mediaDecodeTimeoutMs, input: job.what });
      lose(slot, worker, "time limit");
    }, config.mediaDecodeTimeoutMs);
  };

  function pump() {
    for (const slot of slots) {
      if (slot.job || queue.length === 0) continue;
      start(slot, queue.shift()!);
    }
  }

  /** A waiting decode leaves the queue; a running one stops its worker (a synchronous decode cannot be interrupted). */
  const abort = (job: Job) => {
    const queued = queue.indexOf(job);
    if (queued >= 0) queue.splice(queued, 1);
    const slot = slots.find((s) => s.job === job);
    if (slot) finish(slot, true);
    settle(job);
    job.reject(job.signal!.reason);
  };

  return {
    decode(bytes, want, signal) {
      if (closed) return Promise.reject(new Error("the media decoder is closed"));
      if (signal?.aborted) return Promise.reject(signal.reason);
      let what: string;
      try {
        what = describe(precheck(bytes, want));
      } catch (e) {
        return Promise.reject(e);
      }
      // A free worker means an empty queue (pump keeps it so): only a decode that would wait is counted.
      if (queue.length >= config.mediaMaxQueue && slots.every((s) => s.job)) return Promise.reject(ApiError.overloaded());
      return new Promise<DecodedMedia>((resolve, reject) => {
        const job: Job = { id: nextId++, bytes, want, what, resolve, reject, signal };
        if (signal) {
          job.onAbort = () => abort(job);
          signal.addEventListener("abort", job.onAbort, { once: true });
        }
        queue.push(job);
        pump();
      });
    },

    async close() {
      closed = true;
      for (const job of queue.splice(0)) {
        settle(job);
        job.reject(new Error("the media decoder is closed"));
      }
      const stopping: Promise<void>[] = [];
      for (const slot of slots) {
        const worker = slot.worker;
        if (!worker) continue;
        stopping.push(new Promise((resolve) => worker.addEventListener("close", () => resolve())));
        const job = slot.job;
        finish(slot, true);
        job?.reject(new Error("the media decoder is closed"));
      }
      await Promise.all(stopping);
    },

    stats() {
      return { workers: slots.filter((s) => s.worker).length, busy: slots.filter((s) => s.job).length, queued: queue.length, replaced };
    },
  };
}
