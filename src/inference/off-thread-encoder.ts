// The main thread's side of the tokenizer worker: one lazily started worker, requests matched by id. A worker that
// dies fails what it held and is replaced on the next request.
import type { EncodeReply, EncodeRequest } from "./tokenizer-protocol.ts";

export class OffThreadEncoder {
  private worker: Worker | null = null;
  private pending = new Map<number, { resolve(ids: number[]): void; reject(e: Error): void }>();
  private nextId = 1;

  constructor(
    private readonly url: string | URL,
    private readonly spawn: (url: string | URL) => Worker = (u) => new Worker(u),
  ) {}

  encode(dir: string, text: string): Promise<number[]> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, dir, text } satisfies EncodeRequest);
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

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = this.spawn(this.url);
    // An idle tokenizer worker must not keep the process alive.
    worker.unref();
    worker.onmessage = ({ data }: MessageEvent<EncodeReply>) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      this.pending.delete(data.id);
      if ("error" in data) p.reject(new Error(data.error));
      else p.resolve(Array.from(data.ids));
    };
    worker.onerror = (ev) => {
      if (this.worker === worker) this.worker = null;
      this.fail(new Error(`tokenizer worker failed: ${ev.message}`));
    };
    this.worker = worker;
    return worker;
  }

  private fail(e: Error): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}
