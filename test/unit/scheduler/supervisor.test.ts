// The kind-agnostic worker supervisor, driven with fake workers of a made-up image kind: nothing here is about text.
import { describe, expect, test } from "bun:test";
import { DeviceTurns, DeviceTurnTable } from "../../../src/devices/device-turns.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import type { HealthCause } from "../../../src/models/failures.ts";
import type { Health, ModelEntry } from "../../../src/models/registry.ts";
import { type WorkerFailure, WorkerSupervisor } from "../../../src/scheduler/supervisor.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";
import { waitFor } from "../../helpers/wait-for.ts";
import { FakeWorker } from "./fake-worker.ts";

type ImageSpec = { id: string; steps: number };
type ImageIn = { type: "image_done"; jobId: string };
type ImageOut = { type: "render"; jobId: string } | { type: "abort"; jobId: string };

const model: ModelEntry = { ...parseManifest(fakeManifest("paint-model-v1"), ["fp32"]), dir: "/nowhere" };

function harness(opts: { workersPerModel?: number; hangTimeoutMs?: number; pingIntervalMs?: number; loadTimeoutMs?: number; models?: ModelEntry[]; deviceTurns?: DeviceTurnTable } = {}) {
  const workers: FakeWorker[] = [];
  const logger = memoryLogger();
  const seen = {
    lost: [] as [string[], WorkerFailure][], health: [] as [Health, HealthCause | null][], ready: 0, unservable: [] as WorkerFailure[],
    messages: [] as [number, ImageIn][], restarts: [] as [string, WorkerFailure][],
  };
  const sup: WorkerSupervisor<ImageSpec, ImageIn, ImageOut> = new WorkerSupervisor(opts.models ?? [model], {
    kind: "image",
    workerUrl: "fake:worker",
    workersPerModel: opts.workersPerModel ?? 1,
    logger,
    hangTimeoutMs: opts.hangTimeoutMs,
    loadTimeoutMs: opts.loadTimeoutMs,
    pingIntervalMs: opts.pingIntervalMs ?? 60_000,
    loadSpec: (m) => ({ id: m.id, steps: 4 }),
    onMessage: (workerId, msg) => {
      seen.messages.push([workerId, msg]);
      sup.release(workerId, msg.jobId);
    },
    onLost: (ids, reason) => seen.lost.push([ids, reason]),
    onHealth: (_m, status, message) => seen.health.push([status, message]),
    onReady: () => seen.ready++,
    onUnservable: (_m, reason) => seen.unservable.push(reason),
    onRestart: (m, reason) => seen.restarts.push([m, reason]),
    deviceTurns: opts.deviceTurns,
    spawnWorker: () => {
      const w = new FakeWorker();
      workers.push(w);
      return w;
    },
  });
  const loaded = (w: FakeWorker) => w.reply({ type: "loaded", modelId: model.id, ms: 3 });
  /** Starts the supervisor with every first worker loaded. */
  const start = async () => {
    const started = sup.start();
    workers.forEach(loaded);
    await started;
  };
  const lastHealth = () => seen.health.at(-1);
  return { sup, workers, seen, logger, loaded, start, lastHealth };
}

describe("WorkerSupervisor", () => {
  test("loads each worker with the backend's spec, passes the kind's messages through and counts held work", async () => {
    const h = harness();
    await h.start();
    const w = h.workers[0]!;
    expect(w.posted[0]).toEqual({ type: "load", model: { id: model.id, steps: 4 } });
    expect(h.seen.ready).toBe(1);
    expect(h.lastHealth()).toEqual(["operational", null]);
    h.sup.assign(1, "job-1", { type: "render", jobId: "job-1" });
    h.sup.send(1, { type: "abort", jobId: "job-1" });
    expect(w.types()).toEqual(["load", "render", "abort"]);
    expect(h.sup.ready()).toEqual([{ workerId: 1, model, held: 1, background: 0 }]);
    // Background work counts apart too, until it is released.
    h.sup.assign(1, "job-2", { type: "render", jobId: "job-2" }, true);
    expect(h.sup.ready()).toEqual([{ workerId: 1, model, held: 2, background: 1 }]);
    h.sup.release(1, "job-2");
    expect(h.sup.ready()).toEqual([{ workerId: 1, model, held: 1, background: 0 }]);
    w.reply({ type: "pong", nonce: 1, rssBytes: 12_345, active: 1, queued: 0 });
    w.reply({ type: "image_done", jobId: "job-1" });
    expect(h.seen.messages).toEqual([[1, { type: "image_done", jobId: "job-1" }]]);
    expect(h.sup.stats()).toEqual([{ workerId: 1, model: model.id, state: "ready", held: 0, rssBytes: 12_345 }]);
    await h.sup.shutdown(5);
  });

  test("a crashed worker hands back the work it held, retryably, and a replacement loads", async () => {
    const h = harness();
    await h.start();
    h.sup.assign(1, "a", { type: "render", jobId: "a" });
    h.sup.assign(1, "b", { type: "render", jobId: "b" });
    h.workers[0]!.crash("worker.ts:3\nTypeError: x is not a function\n  at step");
    const crashed: WorkerFailure = { cause: "worker_lost", detail: "worker crashed: worker.ts:3\nTypeError: x is not a function\n  at step" };
    expect(h.seen.lost).toEqual([[["a", "b"], crashed]]);
    expect(h.lastHealth()).toEqual(["degraded", "worker_lost"]);
    expect(h.logger.lines.find((l) => l.msg === "worker lost")).toMatchObject({ kind: "image", worker: 1, failed_work: 2, cause: "worker_lost", reason: crashed.detail });
    // Work handed to the dead worker is lost at once rather than sent nowhere.
    h.sup.assign(1, "c", { type: "render", jobId: "c" });
    expect(h.seen.lost[1]).toEqual([["c"], { cause: "worker_lost", detail: "worker is not available" }]);
    expect(h.workers).toHaveLength(2);
    h.loaded(h.workers[1]!);
    expect(h.lastHealth()).toEqual(["operational", null]);
    expect(h.sup.ready().map((w) => w.workerId)).toEqual([2]);
    expect(h.seen.restarts).toEqual([[model.id, crashed]]);
    await h.sup.shutdown(5);
  });

  test("a worker silent past the hang limit while holding work is retired and replaced; an idle one is only pinged", async () => {
    const h = harness({ workersPerModel: 2, hangTimeoutMs: 40, pingIntervalMs: 15 });
    await h.start();
    h.sup.assign(1, "stuck", { type: "render", jobId: "stuck" });
    const pings = () => h.workers[1]!.types().filter((t) => t === "ping").length;
    await waitFor(() => h.seen.lost.length > 0 && pings() > 1, { what: "the stuck worker retired and the idle one pinged twice" });
    expect(h.seen.lost).toHaveLength(1);
    expect(h.seen.lost[0]![0]).toEqual(["stuck"]);
    expect(h.seen.lost[0]![1]).toMatchObject({ cause: "worker_hung", detail: expect.stringMatching(/^worker stopped responding for \d+ s$/) });
    // Retired from inside (a shutdown message), not terminated.
    expect(h.workers[0]!.types().at(-1)).toBe("shutdown");
    expect(h.workers[0]!.terminated).toBe(false);
    expect(h.sup.stats().map((w) => [w.workerId, w.state])).toEqual([[2, "ready"], [3, "loading"]]);
    // The retired worker closing later changes nothing more.
    h.workers[0]!.close();
    expect(h.seen.lost).toHaveLength(1);
    expect(h.workers).toHaveLength(3);
    await h.sup.shutdown(5);
  });

  test("a failed load degrades the model while another worker serves; with none left it is an outage and unservable", async () => {
    const h = harness({ workersPerModel: 2 });
    const started = h.sup.start();
    h.loaded(h.workers[0]!);
    h.workers[1]!.reply({ type: "load_error", modelId: model.id, message: "bad weights" });
    await started;
    expect(h.lastHealth()).toEqual(["degraded", "load_failed"]);
    expect(h.workers[1]!.types()).toEqual(["load", "shutdown"]);
    expect(h.seen.unservable).toEqual([]);
    h.workers[0]!.close();
    expect(h.seen.unservable).toEqual([]);
    // The worker that had been ready is replaced; the replacement failing leaves nothing to serve the model.
    h.workers[2]!.reply({ type: "load_error", modelId: model.id, message: "bad weights" });
    expect(h.lastHealth()).toEqual(["outage", "load_failed"]);
    expect(h.seen.unservable).toEqual([{ cause: "load_failed", detail: "bad weights" }]);
    expect(h.workers).toHaveLength(3);
    // Only the ready worker that closed was replaced (a restart); failed loads are not retried.
    expect(h.seen.restarts).toEqual([[model.id, { cause: "worker_lost", detail: "worker exited" }]]);
    await h.sup.shutdown(5);
  });

  test("a worker that never finishes loading fails after the load timeout: start resolves, the model is unservable", async () => {
    const h = harness({ loadTimeoutMs: 50 });
    const t0 = performance.now();
    await h.sup.start();
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(h.seen.unservable).toEqual([{ cause: "load_timeout", detail: "did not load within 0.05 s" }]);
    expect(h.lastHealth()).toEqual(["outage", "load_timeout"]);
    expect(h.sup.hasReadyWorker(model.id)).toBe(false);
    expect(h.workers[0]!.types()).toEqual(["load", "shutdown"]);
    expect(h.logger.lines.find((l) => l.msg === "model did not load in time")).toMatchObject({ worker: 1, timeout_ms: 50 });
    // Loading after all changes nothing: it was given up on, and is not replaced in a loop either.
    h.loaded(h.workers[0]!);
    expect(h.sup.hasReadyWorker(model.id)).toBe(false);
    expect(h.seen.ready).toBe(0);
    expect(h.workers).toHaveLength(1);
    await h.sup.shutdown(5);
  });

  test("restart replaces a worker; shutdown waits for workers to close and terminates those that do not", async () => {
    const h = harness({ workersPerModel: 2 });
    await h.start();
    h.sup.assign(2, "x", { type: "render", jobId: "x" });
    h.sup.restart(2, "restarted by test");
    expect(h.seen.lost).toEqual([[["x"], { cause: "worker_restarted", detail: "restarted by test" }]]);
    expect(h.workers[1]!.types().at(-1)).toBe("shutdown");
    h.workers[1]!.close();
    h.loaded(h.workers[2]!);
    expect(h.sup.ready().map((w) => w.workerId)).toEqual([1, 3]);
    // Worker 1 closes when asked; worker 3 never does.
    const politely = h.workers[0]!;
    politely.postMessage = (msg) => {
      politely.posted.push(msg);
      if (msg.type === "shutdown") queueMicrotask(() => politely.close());
    };
    await h.sup.shutdown(30);
    expect(politely.terminated).toBe(false);
    expect(h.workers[2]!.terminated).toBe(true);
    expect(h.seen.lost).toHaveLength(1);
    expect(h.workers).toHaveLength(3);
    expect(h.sup.stats()).toEqual([]);
  });

  test("a webgpu model's workers get seats at the device; one that exits holding the turn passes it on", async () => {
    const table = new DeviceTurnTable(4);
    const onGpu: ModelEntry = { ...parseManifest(fakeManifest("gpu-paint-v1"), ["fp32"]), dir: "/nowhere", placement: { device: "webgpu", dtype: "fp32", reason: "test" } };
    const { workers, loaded, start } = harness({ models: [model, onGpu], deviceTurns: table });
    const started = start();
    const seatOf = (w: FakeWorker) => (w.posted[0] as { seat?: { seat: number; buffer: SharedArrayBuffer } }).seat;
    // The CPU model's worker gets none; the webgpu one's a seat in the table the supervisor was given.
    expect(seatOf(workers[0]!)).toBeUndefined();
    const seat = seatOf(workers[1]!)!;
    const otherSeat = table.claim();
    expect(seat.buffer).toBe(otherSeat.buffer);
    await started;
    // Its thread takes the turn and exits in the middle of it (a crash): another seat waiting gets the turn.
    void new DeviceTurns(seat).run(() => new Promise<void>(() => {}));
    await waitFor(() => table.holder() === seat.seat, { what: "the worker's turn" });
    let ran = false;
    const other = new DeviceTurns(otherSeat).run(async () => void (ran = true));
    workers[1]!.crash("segfault");
    workers[1]!.close();
    await other;
    expect(ran).toBe(true);
    // Its replacement gets a seat of its own.
    await waitFor(() => workers.length === 3, { what: "a replacement worker" });
    loaded(workers[2]!);
    expect(seatOf(workers[2]!)!.seat).not.toBe(seat.seat);
  });

  test("the load timeout counts from load_started: a worker that waited its turn at the device is not cut short", async () => {
    const h = harness({ loadTimeoutMs: 100 });
    const started = h.sup.start();
    const w = h.workers[0]!;
    // The scripted worker: its turn comes after 70 ms, and its load then takes 70 ms more (140 ms in all).
    await new Promise((resolve) => setTimeout(resolve, 70));
    w.reply({ type: "load_started" });
    await new Promise((resolve) => setTimeout(resolve, 70));
    expect(h.seen.unservable).toEqual([]);
    h.loaded(w);
    await started;
    expect(h.sup.hasReadyWorker(model.id)).toBe(true);
    expect(w.types()).toEqual(["load"]);
    await h.sup.shutdown(5);
  });
});
