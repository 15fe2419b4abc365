// The part of the supervisor protocol every model worker speaks alike (src/protocol/supervisor.ts): one load
// (loaded or load_error with the time it took), ping → pong with the thread's memory and work, shutdown, and fatal
// when the worker's state is unreliable; on the webgpu device, the load, each step and the release of the model's
// sessions in the worker's turn there (src/devices/device-turns.ts). A worker entry wires its own kind's messages and
// loop around it.
import { type DeviceSeat, DeviceTurns } from "../src/devices/device-turns.ts";
import type { LifecycleFromWorker, LifecycleToWorker, LoadReport } from "../src/protocol/supervisor.ts";

interface WorkerScope {
  onmessage: ((ev: MessageEvent) => void) | null;
  postMessage(msg: unknown, transfer?: ArrayBuffer[]): void;
  close(): void;
}

// In a Bun worker the global object is the worker scope (`self`).
const scope = globalThis as unknown as WorkerScope;

/** A loaded model as the lifecycle keeps it: where it runs, for the log, and how to free its sessions at shutdown. */
export interface LoadedWork {
  report?: LoadReport;
  dispose(): Promise<void>;
}

export interface LifecycleHooks<Spec extends { id: string }, Out> {
  /** Loads the model; throwing answers load_error with the message. Its `dispose` runs once at shutdown (see `end`). */
  load(spec: Spec): Promise<LoadedWork>;
  /** Work running and waiting, for pong. */
  counts(): { active: number; queued: number };
  /** Every message that is not load, ping or shutdown (ignored once the worker stops). */
  onMessage(msg: Out): void;
}

export interface WorkerLifecycle<Out> {
  post(msg: Out | LifecycleFromWorker, transfer?: ArrayBuffer[]): void;
  /** True once shutdown or a fatal failure began: no more work is taken or reported. */
  readonly stopping: boolean;
  /** The worker's state is unreliable: tells the supervisor (which replaces it) and stops taking work. */
  fatal(err: unknown): void;
  /**
   * Runs `fn` in this worker's turn on the webgpu device (src/devices/device-turns.ts); at once on the CPU. Every pass
   * over the model's sessions goes through here, so shutdown knows when none is running.
   */
  onDevice<T>(fn: () => Promise<T>): Promise<T>;
}

/** Installs the worker's message handler; the kind's own messages go to `hooks.onMessage`. */
export function serveLifecycle<Spec extends { id: string }, In extends { type: string }, Out>(hooks: LifecycleHooks<Spec, In>): WorkerLifecycle<Out> {
  let loading = false;
  let loaded = false;
  let turns: DeviceTurns | null = null;
  /** Frees the loaded model's sessions: set by the load itself, inside its tracked pass, so shutdown never misses it. */
  let dispose: (() => Promise<void>) | null = null;
  /** The load and steps running now: shutdown waits for them before it frees the sessions they use. */
  const running = new Set<Promise<unknown>>();
  /** Set once shutdown frees the model: no pass may start after that. */
  let ending: Promise<void> | null = null;
  const onDevice = <T>(fn: () => Promise<T>): Promise<T> => (turns ? turns.run(fn) : fn());
  const life = {
    stopping: false,
    post: (msg: Out | LifecycleFromWorker, transfer: ArrayBuffer[] = []) => scope.postMessage(msg, transfer),
    fatal(err: unknown) {
      // A pass refused because the worker is ending is not a failure the supervisor has to answer.
      if (!ending) life.post({ type: "fatal", message: err instanceof Error ? err.message : String(err) });
      life.stopping = true;
    },
    onDevice<T>(fn: () => Promise<T>): Promise<T> {
      if (ending) return Promise.reject(new Error("the worker is stopping"));
      const work = onDevice(fn);
      running.add(work);
      const done = () => void running.delete(work);
      work.then(done, done);
      return work;
    },
  };
  /**
   * Ends the worker with its model freed. Sessions left to the thread's teardown are destroyed in no order, and on the
   * webgpu device, where every worker's sessions share one unguarded device context, two workers ending at once
   * corrupted the process's heap (glibc's "corrupted size vs. prev_size" at exit). So the sessions are released after
   * the load and the last step have ended, in this worker's turn.
   */
  const end = async () => {
    life.stopping = true;
    try {
      while (running.size) await Promise.allSettled([...running]);
      if (dispose) await onDevice(dispose);
    } catch {
      // A model that will not free is left to the thread's end.
    } finally {
      scope.close();
    }
  };
  const load = async (spec: Spec, seat: DeviceSeat | undefined) => {
    if (loaded || loading) {
      life.post({ type: "load_error", modelId: spec.id, message: "this worker already has a model" });
      return;
    }
    loading = true;
    let started = performance.now();
    try {
      if (seat) turns = new DeviceTurns(seat);
      // A load creates sessions and runs warm-up passes: device work like any step. Its time counts from its turn.
      const report = await life.onDevice(async () => {
        started = performance.now();
        if (seat) life.post({ type: "load_started" });
        const work = await hooks.load(spec);
        dispose = work.dispose;
        return work.report;
      });
      loaded = true;
      life.post({ type: "loaded", modelId: spec.id, ms: performance.now() - started, ...(report ? { report } : {}) });
    } catch (err) {
      life.post({ type: "load_error", modelId: spec.id, message: err instanceof Error ? err.message : String(err) });
    } finally {
      loading = false;
    }
  };
  scope.onmessage = (ev: MessageEvent<LifecycleToWorker<Spec> | In>) => {
    const msg = ev.data;
    if (life.stopping && msg.type !== "shutdown") return;
    switch (msg.type) {
      case "load": {
        const { model, seat } = msg as Extract<LifecycleToWorker<Spec>, { type: "load" }>;
        void load(model, seat);
        break;
      }
      case "ping":
        life.post({ type: "pong", nonce: (msg as { nonce: number }).nonce, rssBytes: process.memoryUsage().rss, ...hooks.counts() });
        break;
      case "shutdown":
        // Nothing is finished or reported: the supervisor has already given up on this worker's work.
        ending ??= end();
        break;
      default:
        hooks.onMessage(msg as In);
    }
  };
  return life;
}

/** Lets queued messages run between passes, so they take effect at the next pass boundary. */
export const yieldToEvents = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The run loop of a worker whose engine steps through the jobs it holds: `step` while there is work and the worker is
 * not stopping, one loop at a time (calling the returned trigger while it runs does nothing), messages handled between
 * steps so jobs arriving meanwhile join the next one. A step's own failures are the engine's to answer; one escaping
 * it leaves the engine's state unreliable, so it is fatal.
 */
export function workLoop(o: { stopping: () => boolean; hasWork: () => boolean; step: () => Promise<void>; fatal: (err: unknown) => void }): () => Promise<void> {
  let looping = false;
  return async () => {
    if (looping) return;
    looping = true;
    try {
      while (!o.stopping() && o.hasWork()) {
        await o.step();
        await yieldToEvents();
      }
    } catch (err) {
      o.fatal(err);
    } finally {
      looping = false;
    }
  };
}
