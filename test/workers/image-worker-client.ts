// Test helper: drives the real image worker over its protocol (as the image backend's supervisor does) and gathers
// each render's ending.
import type { ImageFromWorker, ImageLoadSpec, ImageWorkerIn, ImageWorkerOut, RenderRequest } from "../../src/protocol/image.ts";

export const IMAGE_WORKER_URL = new URL("../../workers/image-worker.ts", import.meta.url);

export type RenderEnd = ImageFromWorker;
export type Rendered = Extract<ImageFromWorker, { type: "rendered" }>;

/** A text-to-image request on the toy folders (8 prompt ids near 1000, no guidance, 64×64, 2 steps). */
export function renderRequest(over: Partial<RenderRequest> = {}): RenderRequest {
  return { promptIds: [1000, 1003, 1010, 990, 1200, 800, 1000, 1000], guidance: 1, width: 64, height: 64, steps: 2, seed: 1, ...over };
}

export class ImageWorkerClient {
  readonly worker: Worker;
  /** Every message in arrival order. */
  readonly messages: ImageWorkerOut[] = [];
  private readonly waiters = new Map<string, (end: RenderEnd) => void>();
  private readonly listeners: ((msg: ImageWorkerOut) => void)[] = [];

  constructor() {
    this.worker = new Worker(IMAGE_WORKER_URL);
    this.worker.onmessage = (ev: MessageEvent<ImageWorkerOut>) => {
      const msg = ev.data;
      this.messages.push(msg);
      if (msg.type === "rendered" || msg.type === "render_failed" || msg.type === "render_cancelled") {
        this.waiters.get(msg.jobId)?.(msg);
        this.waiters.delete(msg.jobId);
      }
      for (const l of [...this.listeners]) l(msg);
    };
  }

  post(msg: ImageWorkerIn): void {
    this.worker.postMessage(msg);
  }

  next<T extends ImageWorkerOut["type"]>(type: T): Promise<Extract<ImageWorkerOut, { type: T }>> {
    return new Promise((resolve) => {
      const l = (msg: ImageWorkerOut) => {
        if (msg.type !== type) return;
        this.listeners.splice(this.listeners.indexOf(l), 1);
        resolve(msg as Extract<ImageWorkerOut, { type: T }>);
      };
      this.listeners.push(l);
    });
  }

  /** `served`: the sizes and prompt length the server would offer (none, and CLIP's 77, unless a test says), and the device. */
  async load(dir: string, maxBatch = 4, threads = 1, served: Pick<ImageLoadSpec, "sizes" | "textLength" | "device"> = { sizes: [], textLength: 77 }): Promise<Extract<ImageWorkerOut, { type: "loaded" | "load_error" }>> {
    const done = Promise.race([this.next("loaded"), this.next("load_error")]);
    this.post({ type: "load", model: { id: "toy-image", dir, threads, maxBatch, ...served } });
    return done;
  }

  /** Sends a render and resolves with how it ended. */
  render(jobId: string, render: RenderRequest): Promise<RenderEnd> {
    const done = new Promise<RenderEnd>((resolve) => this.waiters.set(jobId, resolve));
    this.post({ type: "render", jobId, render });
    return done;
  }

  /** A render that must succeed. */
  async rendered(jobId: string, render: RenderRequest): Promise<Rendered> {
    const end = await this.render(jobId, render);
    if (end.type !== "rendered") throw new Error(`${jobId} ended ${end.type}: ${"message" in end ? end.message : ""}`);
    return end;
  }

  async ping(): Promise<Extract<ImageWorkerOut, { type: "pong" }>> {
    const pong = this.next("pong");
    this.post({ type: "ping", nonce: 3 });
    return pong;
  }

  shutdown(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.worker.addEventListener("close", () => resolve(), { once: true }));
    this.post({ type: "shutdown" });
    return closed;
  }
}
