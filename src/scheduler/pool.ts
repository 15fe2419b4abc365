// Inference worker threads: one set per model; spawns, loads, health-checks, and replaces workers that die or hang.
import type { Logger } from "../log/logger.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { FromWorker, ModelLoadSpec, SamplingParams, SeqDelta, SeqFinish, ToWorker } from "./protocol.ts";
import type { SlotView } from "./queue.ts";

export interface PoolOptions {
  workerUrl: string | URL;
  workersPerModel: number;
  threads: number;
  logger: Logger;
  /** A worker silent this long while holding sequences is taken as hung and replaced. */
  hangTimeoutMs?: number;
  pingIntervalMs?: number;
  onStep(deltas: SeqDelta[], finished: SeqFinish[]): void;
  /** The worker died or hung: these sequences are lost (the caller fails them as retryable). */
  onWorkerLost(seqIds: string[], reason: string): void;
  onHealth(model: string, status: "operational" | "degraded" | "outage", message: string | null): void;
  /** Called when a worker becomes ready, so waiting entries can be dispatched. */
  onReady(): void;
  /** Creates the worker thread; tests pass one that keeps a handle for fault injection. */
  spawnWorker?: (url: string | URL) => Worker;
}

/** A worker asked to stop that has not closed by then is terminated (terminating one mid-run can take the process down). */
const RETIRE_GRACE_MS = 30_000;

interface Handle {
  id: number;
  model: ModelEntry;
  worker: Worker;
  state: "loading" | "ready" | "dead";
  held: Set<string>;
  lastHeard: number;
  rssBytes: number;
}

export class WorkerPool {
  private handles = new Map<number, Handle>();
  private nextId = 1;
  private timer: ReturnType<typeof setInterval> | null = null;
  private closing = false;

  constructor(private readonly models: ModelEntry[], private readonly opts: PoolOptions) {}

  /** Spawns every worker and resolves once each has loaded or failed to load. */
  async start(): Promise<void> {
    const loads: Promise<void>[] = [];
    for (const model of this.models) for (let i = 0; i < this.opts.workersPerModel; i++) loads.push(this.spawn(model));
    await Promise.all(loads);
    const every = this.opts.pingIntervalMs ?? 2000;
    this.timer = setInterval(() => this.checkHealth(), every);
    this.timer.unref?.();
  }

  slots(): SlotView[] {
    return [...this.handles.values()]
      .filter((h) => h.state === "ready")
      .map((h) => ({ workerId: h.id, model: h.model.id, free: this.maxBatch(h.model) - h.held.size }));
  }

  hasReadyWorker(model: string): boolean {
    return [...this.handles.values()].some((h) => h.model.id === model && h.state === "ready");
  }

  add(workerId: number, seqId: string, promptIds: number[], params: SamplingParams): void {
    const h = this.handles.get(workerId);
    if (!h || h.state !== "ready") {
      this.opts.onWorkerLost([seqId], "worker is not available");
      return;
    }
    h.held.add(seqId);
    this.post(h, { type: "add", seqId, promptIds, params });
  }

  cancel(workerId: number, seqId: string): void {
    const h = this.handles.get(workerId);
    if (h && h.state === "ready") this.post(h, { type: "cancel", seqId });
  }

  stats(): { workerId: number; model: string; state: string; held: number; rssBytes: number }[] {
    return [...this.handles.values()].map((h) => ({ workerId: h.id, model: h.model.id, state: h.state, held: h.held.size, rssBytes: h.rssBytes }));
  }

  /** Replaces a worker: its sequences fail as retryable, a new one loads, the old one is asked to stop. */
  restart(workerId: number, reason = "restarted"): void {
    const h = this.handles.get(workerId);
    if (h) this.lose(h, reason, true);
  }

  /** Asks every worker to stop and waits for them (terminating stragglers after `graceMs`). */
  async shutdown(graceMs = 5000): Promise<void> {
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    const all = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(all.map((h) => this.retire(h, graceMs)));
  }

  /** Stops a live worker from inside (a `shutdown` message), which is safe while it runs a session; terminate is not. */
  private retire(h: Handle, graceMs: number): Promise<void> {
    h.state = "dead";
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.opts.logger.warn("worker did not stop; terminating it", { worker: h.id });
        h.worker.terminate();
        resolve();
      }, graceMs);
      timer.unref?.();
      h.worker.addEventListener("close", () => {
        clearTimeout(timer);
        resolve();
      });
      this.post(h, { type: "shutdown" });
    });
  }

  private maxBatch(model: ModelEntry): number {
    return model.batching.leftPadding === "exact" ? model.batching.maxBatch : 1;
  }

  private post(h: Handle, msg: ToWorker): void {
    h.worker.postMessage(msg);
  }

  private spawn(model: ModelEntry): Promise<void> {
    const id = this.nextId++;
    const worker = this.opts.spawnWorker ? this.opts.spawnWorker(this.opts.workerUrl) : new Worker(this.opts.workerUrl);
    const h: Handle = { id, model, worker, state: "loading", held: new Set(), lastHeard: Date.now(), rssBytes: 0 };
    this.handles.set(id, h);
    const spec: ModelLoadSpec = { id: model.id, dir: model.dir, dtype: model.defaultDtype, threads: this.opts.threads, maxBatch: this.maxBatch(model) };
    return new Promise<void>((resolve) => {
      worker.onmessage = (ev: MessageEvent<FromWorker>) => {
        h.lastHeard = Date.now();
        const msg = ev.data;
        switch (msg.type) {
          case "loaded":
            h.state = "ready";
            this.opts.logger.info("worker ready", { worker: id, model: model.id, load_ms: Math.round(msg.ms) });
            this.refreshHealth(model.id);
            this.opts.onReady();
            resolve();
            break;
          case "load_error":
            this.opts.logger.error("model failed to load", { worker: id, model: model.id, reason: msg.message });
            this.handles.delete(id);
            void this.retire(h, RETIRE_GRACE_MS);
            this.opts.onHealth(model.id, "outage", `failed to load: ${msg.message}`);
            resolve();
            break;
          case "step":
            for (const f of msg.finished) h.held.delete(f.seqId);
            this.opts.onStep(msg.deltas, msg.finished);
            break;
          case "pong":
            h.rssBytes = msg.rssBytes;
            break;
          case "fatal":
            this.lose(h, `worker failed: ${msg.message}`, true);
            break;
        }
      };
      worker.onerror = (ev) => {
        this.lose(h, `worker crashed: ${firstLine((ev as ErrorEvent).message)}`, false);
        resolve();
      };
      worker.addEventListener("close", () => {
        this.lose(h, "worker exited", false);
        resolve();
      });
      this.post(h, { type: "load", model: spec });
    });
  }

  /** Fails the worker's sequences and starts a replacement (unless closing); a still-running worker is retired. */
  private lose(h: Handle, reason: string, alive: boolean): void {
    if (h.state === "dead" || this.closing) return;
    const wasReady = h.state === "ready";
    this.handles.delete(h.id);
    if (alive) void this.retire(h, RETIRE_GRACE_MS);
    else h.state = "dead";
    const lost = [...h.held];
    h.held.clear();
    this.opts.logger.error("worker lost", { worker: h.id, model: h.model.id, reason, failed_sequences: lost.length });
    if (lost.length) this.opts.onWorkerLost(lost, reason);
    if (!wasReady) {
      this.opts.onHealth(h.model.id, "outage", reason);
      return;
    }
    this.refreshHealth(h.model.id, reason);
    void this.spawn(h.model);
  }

  private refreshHealth(model: string, reason: string | null = null): void {
    const mine = [...this.handles.values()].filter((h) => h.model.id === model);
    const ready = mine.filter((h) => h.state === "ready").length;
    if (ready === this.opts.workersPerModel) this.opts.onHealth(model, "operational", null);
    else if (ready > 0 || mine.length > 0) this.opts.onHealth(model, "degraded", reason ?? "a worker is restarting");
    else this.opts.onHealth(model, "outage", reason ?? "no worker is running");
  }

  private checkHealth(): void {
    const now = Date.now();
    const hang = this.opts.hangTimeoutMs ?? 120_000;
    for (const h of [...this.handles.values()]) {
      if (h.state !== "ready") continue;
      if (h.held.size > 0 && now - h.lastHeard > hang) {
        this.lose(h, `worker stopped responding for ${Math.round((now - h.lastHeard) / 1000)} s`, true);
        continue;
      }
      this.post(h, { type: "ping", nonce: now });
    }
  }
}

/** Bun's worker error text carries a code frame; keep the line that names the error. */
function firstLine(text: string | undefined): string {
  const lines = (text ?? "").split("\n").map((l) => l.trim()).filter(Boolean);
  return lines.find((l) => /^\w*Error\b/.test(l)) ?? lines[0] ?? "unknown error";
}
