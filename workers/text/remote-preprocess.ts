// The inference worker's side of its preprocessing thread (workers/media-prep-worker.ts): one request per input, the
// prepared tensor handed back without a copy; a thread that dies fails what it held and the next input starts a new one.
import type { FromPrep, ToPrep } from "../../src/protocol/media-prep.ts";
import type { MediaInput } from "../../src/protocol/text.ts";
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
  /** A thread that ends without an error (process.exit, a native abort) reports only this. */
  addEventListener(type: "close", listener: () => void): void;
  postMessage(msg: ToPrep, transfer?: ArrayBuffer[]): void;
  terminate(): void;
}

interface Pending {
  resolve(p: PreparedMedia): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** One input may take this long (a 30 s clip takes about 0.3 s); past it the thread is taken as wedged and replaced. */
export const PREPARE_TIMEOUT_MS = 60_000;

export class RemotePreprocessor implements Preprocessor {
  private thread: PrepThread | null = null;
  private ready: Promise<void> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  private constructor(
    private readonly spawn: () => PrepThread,
    private readonly load: Extract<ToPrep, { type: "load" }>,
    private readonly timeoutMs: number,
  ) {}

  /** Starts the thread and loads the folder's processors there; rejects with the load's reason. */
  static async start(spawn: () => PrepThread, dir: string, kinds: { image: boolean; audio: boolean }, timeoutMs = PREPARE_TIMEOUT_MS): Promise<RemotePreprocessor> {
    const p = new RemotePreprocessor(spawn, { type: "load", dir, kinds }, timeoutMs);
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
      thread.addEventListener("close", () => {
        const err = new Error("the preprocessing thread ended");
        reject(err);
        this.lose(thread, err);
      });
    });
    thread.postMessage(this.load);
    return this.ready;
  }

  private answer(msg: Extract<FromPrep, { type: "prepared" | "failed" }>): void {
    const p = this.pending.get(msg.id);
    if (!p) return;
    clearTimeout(p.timer);
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
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }

  async prepare(input: MediaInput): Promise<PreparedMedia> {
    await this.connect();
    const id = this.nextId++;
    const thread = this.thread!;
    const done = new Promise<PreparedMedia>((resolve, reject) => {
      const timer = setTimeout(() => this.lose(thread, new Error(`preprocessing took over ${this.timeoutMs} ms`)), this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
    });
    // Copied, not transferred: a copy costs about a millisecond for a 30 s clip, and the caller keeps its input intact.
    thread.postMessage({ type: "prepare", id, input });
    return done;
  }

  dispose(): void {
    if (this.thread) this.lose(this.thread, new Error("the model was unloaded"));
  }
}
