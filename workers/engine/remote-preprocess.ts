// The inference worker's side of its preprocessing thread (workers/media-prep-worker.ts): one request per input, the
// prepared tensor handed back without a copy; a thread that dies fails what it held and the next input starts a new one.
import type { FromPrep, ToPrep } from "../../src/scheduler/media-prep-protocol.ts";
import type { MediaInput } from "../../src/scheduler/protocol.ts";
import { MediaInputError, type PreparedMedia } from "./model-runner.ts";

/** What preprocesses a media model's inputs for its runner (this thread of its own, in the worker). */
export interface Preprocessor {
  prepare(input: MediaInput): Promise<PreparedMedia>;
  dispose(): void;
}

/** The worker-like object the client talks to (a Bun Worker; a fake in tests). */
export interface PrepThread {
  onmessage: ((ev: MessageEvent<FromPrep>) => void) | null;
  onerror: ((ev: ErrorEvent) => void) | null;
  postMessage(msg: ToPrep, transfer?: ArrayBuffer[]): void;
  terminate(): void;
}

interface Pending {
  resolve(p: PreparedMedia): void;
  reject(e: Error): void;
}

export class RemotePreprocessor implements Preprocessor {
  private thread: PrepThread | null = null;
  private ready: Promise<void> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  private constructor(
    private readonly spawn: () => PrepThread,
    private readonly load: Extract<ToPrep, { type: "load" }>,
  ) {}

  /** Starts the thread and loads the folder's processors there; rejects with the load's reason. */
  static async start(spawn: () => PrepThread, dir: string, kinds: { image: boolean; audio: boolean }): Promise<RemotePreprocessor> {
    const p = new RemotePreprocessor(spawn, { type: "load", dir, kinds });
    await p.connect();
    return p;
  }

  private connect(): Promise<void> {
    if (this.ready) return this.ready;
    const thread = this.spawn();
    this.thread = thread;
    this.ready = new Promise<void>((resolve, reject) => {
      thread.onmessage = ({ data: msg }) => {
        if (msg.type === "loaded") resolve();
        else if (msg.type === "load_error") {
          reject(new Error(msg.message));
          this.lose(thread, new Error(msg.message));
        } else this.answer(msg);
      };
      thread.onerror = (ev) => {
        const err = new Error(`the preprocessing thread failed: ${ev.message}`);
        reject(err);
        this.lose(thread, err);
      };
    });
    thread.postMessage(this.load);
    return this.ready;
  }

  private answer(msg: Extract<FromPrep, { type: "prepared" | "failed" }>): void {
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.type === "prepared") p.resolve({ data: msg.data, dims: msg.dims });
    else p.reject(msg.safe ? new MediaInputError(msg.message) : new Error(msg.message));
  }

  /** The thread is gone: what it held fails, and the next input starts a new one. */
  private lose(thread: PrepThread, err: Error): void {
    if (this.thread !== thread) return;
    this.thread = null;
    this.ready = null;
    thread.terminate();
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  async prepare(input: MediaInput): Promise<PreparedMedia> {
    await this.connect();
    const id = this.nextId++;
    const done = new Promise<PreparedMedia>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    // Copied, not transferred: a copy costs about a millisecond for a 30 s clip, and the caller keeps its input intact.
    this.thread!.postMessage({ type: "prepare", id, input });
    return done;
  }

  dispose(): void {
    if (this.thread) this.lose(this.thread, new Error("the model was unloaded"));
  }
}
