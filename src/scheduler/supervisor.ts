// Supervises the worker threads of one model kind: spawn, load handshake, health pings, hang detection, replacement, retirement.
//
// The seam: a backend (text-backend.ts today; an image backend and a vision encoder later) owns one WorkerSupervisor.
// The supervisor knows only lifecycle messages (src/protocol/supervisor.ts) and opaque work ids held per worker: the
// backend supplies the load spec, posts its own messages through `assign`/`send`, receives every non-lifecycle
// message in `onMessage`, and calls `release` when its work ends. When a worker dies or hangs, the ids it held
// are handed back through `onLost` so the backend's caller can fail them retryably. Every failure is reported as a
// fixed cause plus the raw detail (src/models/failures.ts): the detail is logged here, never shown to clients.
import { type DeviceSeat, type DeviceTurnTable, processDeviceTurns } from "../devices/device-turns.ts";
import type { Logger } from "../log/logger.ts";
import type { Failure, HealthCause, WorkerCause } from "../models/failures.ts";
import type { Health, ModelEntry } from "../models/registry.ts";
import type { LifecycleFromWorker, LifecycleToWorker } from "../protocol/supervisor.ts";

/** The part of a Bun Worker the supervisor uses (a test passes a scripted fake of this shape). */
export interface SupervisedWorker {
  postMessage(message: unknown): void;
  terminate(): void;
  addEventListener(type: "close", listener: () => void): void;
  onmessage: ((ev: MessageEvent) => void) | null;
  onerror: ((ev: ErrorEvent) => void) | null;
}

/** A worker as a backend sees it. */
export interface WorkerView {
  workerId: number;
  model: ModelEntry;
  /** Work ids the worker holds right now. */
  held: number;
  /** How many of them are background work (the flex and batch lanes). */
  background: number;
}

export type WorkerFailure = Failure<WorkerCause>;

export interface SupervisorOptions<Spec, In> {
  /** Names the kind in log lines ("text", "image", ...). */
  kind: string;
  workerUrl: string | URL;
  workersPerModel: number;
  logger: Logger;
  /** A worker silent this long while holding work is taken as hung and replaced. */
  hangTimeoutMs?: number;
  /** A worker that has not loaded its model by then failed to load (its model is unservable rather than waited on). */
  loadTimeoutMs?: number;
  pingIntervalMs?: number;
  /** What a fresh worker is told to load for this model. */
  loadSpec(model: ModelEntry): Spec;
  /** Every message that is not part of the lifecycle (the kind's own protocol). */
  onMessage(workerId: number, msg: In): void;
  /** The worker died or hung: these work ids are lost (the caller fails them as retryable). */
  onLost(ids: string[], failure: WorkerFailure): void;
  onHealth(model: string, status: Health, cause: HealthCause | null): void;
  /** A worker became ready, so waiting work can be dispatched. */
  onReady(): void;
  /** No worker is left for the model, none loading: work still waiting for it can never run. */
  onUnservable?(model: string, failure: WorkerFailure): void;
  /** A ready worker was lost and a replacement is loading (the worker-restarts metric). */
  onRestart?(model: string, failure: WorkerFailure): void;
  /** Creates the worker thread; tests pass one that keeps a handle for fault injection. */
  spawnWorker?: (url: string | URL) => SupervisedWorker;
  /** Where webgpu workers take turns on the device (default: the process's one table; ONNX Runtime has one context). */
  deviceTurns?: DeviceTurnTable;
}

/** What a backend passes through to its supervisor unchanged: where its workers come from and who hears of them. */
export type PoolOptions = Omit<SupervisorOptions<unknown, never>, "kind" | "loadSpec" | "onMessage">;

/** A worker asked to stop that has not closed by then is terminated (terminating one mid-run can take the process down). */
const RETIRE_GRACE_MS = 30_000;
/** Loading even a large model from a local disk takes well under this. */
export const DEFAULT_LOAD_TIMEOUT_MS = 300_000;

interface Handle {
  id: number;
  model: ModelEntry;
  worker: SupervisedWorker;
  state: "loading" | "ready" | "dead";
  held: Set<string>;
  /** The held ids assigned as background work. */
  background: Set<string>;
  lastHeard: number;
  rssBytes: number;
}

export class WorkerSupervisor<Spec, In extends { type: string }, Out extends { type: string }> {
  private handles = new Map<number, Handle>();
  private nextId = 1;
  private timer: ReturnType<typeof setInterval> | null = null;
  private closing = false;

  constructor(private readonly models: ModelEntry[], private readonly opts: SupervisorOptions<Spec, In>) {}

  /** Spawns every worker and resolves once each has loaded or failed to load. */
  async start(): Promise<void> {
    const loads: Promise<void>[] = [];
    for (const model of this.models) for (let i = 0; i < this.opts.workersPerModel; i++) loads.push(this.spawn(model));
    await Promise.all(loads);
    this.timer = setInterval(() => this.checkHealth(), this.opts.pingIntervalMs ?? 2000);
    this.timer.unref?.();
  }

  /** Workers that can take work now. */
  ready(): WorkerView[] {
    const out: WorkerView[] = [];
    for (const h of this.handles.values()) if (h.state === "ready") out.push({ workerId: h.id, model: h.model, held: h.held.size, background: h.background.size });
    return out;
  }

  /** The model a worker serves, while the pool holds it. */
  modelOf(workerId: number): string | undefined {
    return this.handles.get(workerId)?.model.id;
  }

  hasReadyWorker(model: string): boolean {
    for (const h of this.handles.values()) if (h.model.id === model && h.state === "ready") return true;
    return false;
  }

  /** Hands a work id to a worker with the message that starts it; a worker that is gone loses it at once. */
  assign(workerId: number, workId: string, msg: Out, background = false): void {
    const h = this.handles.get(workerId);
    if (!h || h.state !== "ready") {
      this.opts.onLost([workId], { cause: "worker_lost", detail: "worker is not available" });
      return;
    }
    h.held.add(workId);
    if (background) h.background.add(workId);
    h.worker.postMessage(msg);
  }

  /** Posts a message about work the worker already holds (a cancel); dropped if the worker is gone. */
  send(workerId: number, msg: Out): void {
    const h = this.handles.get(workerId);
    if (h && h.state === "ready") h.worker.postMessage(msg);
  }

  /** The worker finished this work id: it no longer counts against it, nor is it lost with it. */
  release(workerId: number, workId: string): void {
    const h = this.handles.get(workerId);
    h?.held.delete(workId);
    h?.background.delete(workId);
  }

  stats(): { workerId: number; model: string; state: string; held: number; rssBytes: number }[] {
    return [...this.handles.values()].map((h) => ({ workerId: h.id, model: h.model.id, state: h.state, held: h.held.size, rssBytes: h.rssBytes }));
  }

  /** Replaces a worker: its work is lost (retryable), a new one loads, the old one is asked to stop. */
  restart(workerId: number, reason = "restarted"): void {
    const h = this.handles.get(workerId);
    if (h) this.lose(h, { cause: "worker_restarted", detail: reason }, true);
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
        this.opts.logger.warn("worker did not stop; terminating it", { kind: this.opts.kind, worker: h.id });
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

  private post(h: Handle, msg: LifecycleToWorker<Spec>): void {
    h.worker.postMessage(msg);
  }

  private spawn(model: ModelEntry): Promise<void> {
    const id = this.nextId++;
    const worker = this.opts.spawnWorker ? this.opts.spawnWorker(this.opts.workerUrl) : new Worker(this.opts.workerUrl);
    const h: Handle = { id, model, worker, state: "loading", held: new Set(), background: new Set(), lastHeard: Date.now(), rssBytes: 0 };
    this.handles.set(id, h);
    const seat = this.deviceSeat(model, worker);
    const log = this.opts.logger;
    return new Promise<void>((resolve) => {
      const loadMs = this.opts.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS;
      const armLoadTimer = () => setTimeout(() => {
        if (h.state !== "loading") return;
        log.error("model did not load in time", { kind: this.opts.kind, worker: id, model: model.id, timeout_ms: loadMs });
        this.handles.delete(id);
        void this.retire(h, RETIRE_GRACE_MS);
        this.gone(model.id, { cause: "load_timeout", detail: `did not load within ${loadMs / 1000} s` });
        resolve();
      }, loadMs);
      let loadTimer = armLoadTimer();
      loadTimer.unref?.();
      worker.onmessage = (ev: MessageEvent<LifecycleFromWorker | In>) => {
        h.lastHeard = Date.now();
        const msg = ev.data as LifecycleFromWorker;
        if (msg.type === "loaded" || msg.type === "load_error") clearTimeout(loadTimer);
        switch (msg.type) {
          case "load_started":
            // The time it waited for the device (other workers loading there) is not its own load's.
            if (h.state !== "loading") break;
            clearTimeout(loadTimer);
            loadTimer = armLoadTimer();
            loadTimer.unref?.();
            break;
          case "loaded":
            // A worker given up on (load timeout, shutdown) stays retired even if it loads after all.
            if (h.state !== "loading") break;
            h.state = "ready";
            log.info("worker ready", { kind: this.opts.kind, worker: id, model: model.id, load_ms: Math.round(msg.ms), ...(msg.report ?? {}) });
            this.refreshHealth(model.id);
            this.opts.onReady();
            resolve();
            break;
          case "load_error":
            if (h.state !== "loading") break;
            log.error("model failed to load", { kind: this.opts.kind, worker: id, model: model.id, reason: msg.message });
            this.handles.delete(id);
            void this.retire(h, RETIRE_GRACE_MS);
            this.gone(model.id, { cause: "load_failed", detail: msg.message });
            resolve();
            break;
          case "pong":
            h.rssBytes = msg.rssBytes;
            break;
          case "fatal":
            this.lose(h, { cause: "worker_lost", detail: `worker failed: ${msg.message}` }, true);
            break;
          default:
            // A dead worker's last messages are ignored: its work was already handed back as lost.
            if (h.state === "ready") this.opts.onMessage(id, ev.data as In);
        }
      };
      worker.onerror = (ev) => {
        clearTimeout(loadTimer);
        this.lose(h, { cause: "worker_lost", detail: `worker crashed: ${(ev as ErrorEvent).message}` }, false);
        resolve();
      };
      worker.addEventListener("close", () => {
        clearTimeout(loadTimer);
        this.lose(h, { cause: "worker_lost", detail: "worker exited" }, false);
        resolve();
      });
      this.post(h, { type: "load", model: this.opts.loadSpec(model), ...(seat ? { seat } : {}) });
    });
  }

  /** A webgpu worker's seat at the device, given back (with any turn it held) once the thread has exited. */
  private deviceSeat(model: ModelEntry, worker: SupervisedWorker): DeviceSeat | null {
    if (model.placement?.device !== "webgpu") return null;
    const turns = this.opts.deviceTurns ?? processDeviceTurns;
    const seat = turns.claim();
    worker.addEventListener("close", () => turns.release(seat));
    return seat;
  }

  /** Hands back the worker's work and starts a replacement (unless closing); a still-running worker is retired. */
  private lose(h: Handle, failure: WorkerFailure, alive: boolean): void {
    if (h.state === "dead" || this.closing) return;
    const wasReady = h.state === "ready";
    this.handles.delete(h.id);
    if (alive) void this.retire(h, RETIRE_GRACE_MS);
    else h.state = "dead";
    const lost = [...h.held];
    h.held.clear();
    this.opts.logger.error("worker lost", {
      kind: this.opts.kind, worker: h.id, model: h.model.id, cause: failure.cause, reason: failure.detail, failed_work: lost.length,
    });
    if (lost.length) this.opts.onLost(lost, failure);
    // One that never loaded is not replaced: the same load would likely fail again, in a loop.
    if (!wasReady) {
      this.gone(h.model.id, failure);
      return;
    }
    // The replacement is counted first, so the model reads degraded while it loads, not down.
    void this.spawn(h.model);
    this.opts.onRestart?.(h.model.id, failure);
    this.refreshHealth(h.model.id, failure);
  }

  /** A worker left without a replacement: report the model's health, and whether anything can still serve it. */
  private gone(model: string, failure: WorkerFailure): void {
    this.refreshHealth(model, failure);
    if (this.closing) return;
    for (const h of this.handles.values()) if (h.model.id === model) return;
    this.opts.onUnservable?.(model, failure);
  }

  private refreshHealth(model: string, failure: WorkerFailure | null = null): void {
    const mine = [...this.handles.values()].filter((h) => h.model.id === model);
    const ready = mine.filter((h) => h.state === "ready").length;
    if (ready === this.opts.workersPerModel) this.opts.onHealth(model, "operational", null);
    else if (mine.length > 0) this.opts.onHealth(model, "degraded", failure?.cause ?? "worker_starting");
    else this.opts.onHealth(model, "outage", failure?.cause ?? "no_worker");
  }

  private checkHealth(): void {
    const now = Date.now();
    const hang = this.opts.hangTimeoutMs ?? 120_000;
    for (const h of [...this.handles.values()]) {
      if (h.state !== "ready") continue;
      if (h.held.size > 0 && now - h.lastHeard > hang) {
        this.lose(h, { cause: "worker_hung", detail: `worker stopped responding for ${Math.round((now - h.lastHeard) / 1000)} s` }, true);
        continue;
      }
      this.post(h, { type: "ping", nonce: now });
    }
  }
}
