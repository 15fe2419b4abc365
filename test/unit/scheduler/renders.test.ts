// Image renders in the scheduler: one queue and budget with sequences, dispatch to the image backend's slots, one
// image per render, cancels, and render failures mapped as the spec asks (503 with no code when retryable).
import { describe, expect, test } from "bun:test";
import { ApiError } from "../../../src/errors/api-error.ts";
import type { RenderRequest } from "../../../src/protocol/image.ts";
import type { SlotView } from "../../../src/scheduler/queue.ts";
import { type RenderBackend, type RenderEvent, Scheduler, type SequenceBackend } from "../../../src/scheduler/scheduler.ts";
import { greedyParams } from "../../helpers/sampling.ts";

const IMAGE = "img-model-v1";
const TEXT = "text-model-v1";

class FakeRenders implements RenderBackend {
  readonly entryCost = 1;
  readonly started: { workerId: number; jobId: string; seed: number }[] = [];
  readonly cancelled: string[] = [];
  readonly held = new Set<string>();
  constructor(readonly capacity: number) {}
  slots(): SlotView[] {
    return [{ workerId: 3, model: IMAGE, free: this.capacity - this.held.size }];
  }
  hasReadyWorker(model: string): boolean {
    return model === IMAGE;
  }
  render(workerId: number, jobId: string, render: RenderRequest): void {
    this.started.push({ workerId, jobId, seed: render.seed });
    this.held.add(jobId);
  }
  cancel(_workerId: number, jobId: string): void {
    this.cancelled.push(jobId);
  }
}

const noText: SequenceBackend = { entryCost: 1, slots: () => [{ workerId: 1, model: TEXT, free: 4 }], hasReadyWorker: (m) => m === TEXT, add: () => {}, cancel: () => {} };

const render = (seed: number): RenderRequest => ({ promptIds: [1, 2], guidance: 0, width: 64, height: 64, steps: 2, seed });

function setup(budget: number, capacity: number) {
  const scheduler = new Scheduler(budget);
  const backend = new FakeRenders(capacity);
  scheduler.attach(noText);
  scheduler.attachRenders(backend);
  const submit = (seeds: number[], signal?: AbortSignal) => scheduler.submitRenders(seeds.map((seed) => ({ model: IMAGE, render: render(seed), signal })));
  return { scheduler, backend, submit };
}

async function drain(stream: AsyncIterable<RenderEvent>): Promise<RenderEvent[]> {
  const out: RenderEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

async function failure(stream: AsyncIterable<RenderEvent>): Promise<ApiError> {
  try {
    await drain(stream);
  } catch (e) {
    return e as ApiError;
  }
  throw new Error("the stream ended without failing");
}

const image = { rgb: new Uint8Array(3), width: 1, height: 1, timings: { textMs: 1, encodeMs: 0, denoiseMs: 5, decodeMs: 2 } };

describe("renders in the scheduler", () => {
  test("the n renders of a request share the budget with sequences: admitted together or refused with 503 service_overloaded", () => {
    const { scheduler, submit } = setup(3, 1);
    scheduler.submit([{ model: TEXT, promptIds: [1], params: greedyParams(2) }]);
    expect(() => submit([1, 2, 3])).toThrow(expect.objectContaining({ status: 503, code: "service_overloaded" }));
    expect(submit([1, 2])).toHaveLength(2);
    expect(() => scheduler.submitRenders([{ model: "other-v1", render: render(1) }])).toThrow(expect.objectContaining({ code: "backend_unavailable" }));
  });

  test("renders go to free image slots in order; an image ends its stream and frees the slot for the next", async () => {
    const { scheduler, backend, submit } = setup(8, 1);
    const [a, b] = submit([5, 6]);
    expect(backend.started.map((s) => s.seed)).toEqual([5]);
    const first = backend.started[0]!.jobId;
    expect(first).toMatch(/^render_\d+$/);
    backend.held.delete(first);
    scheduler.onRendered(first, image);
    expect(await drain(a!)).toEqual([{ type: "rendered", ...image }]);
    expect(backend.started.map((s) => s.seed)).toEqual([5, 6]);
    backend.held.clear();
    scheduler.onRenderEnded(backend.started[1]!.jobId, "cancelled");
    expect(await drain(b!)).toEqual([]);
    expect(scheduler.load()).toEqual({ waiting: 0, active: 0 });
  });

  test("an abort before dispatch ends the render with no image; after dispatch the worker is told", async () => {
    const { backend, submit } = setup(8, 1);
    const running = new AbortController();
    const waiting = new AbortController();
    submit([1], running.signal);
    const [queued] = submit([2], waiting.signal);
    waiting.abort();
    expect(await drain(queued!)).toEqual([]);
    running.abort();
    expect(backend.cancelled).toEqual([backend.started[0]!.jobId]);
  });

  test("failures: retryable and a lost worker are 503 with no code; others a generic 500; an unservable model 503 backend_unavailable", async () => {
    const { scheduler, backend, submit } = setup(8, 4);
    const [nan, broken, lost] = submit([1, 2, 3]);
    const [j1, j2, j3] = backend.started.map((s) => s.jobId);
    scheduler.onRenderEnded(j1!, { failure: { cause: "render_retryable", detail: "non-finite values in the UNet output" } });
    scheduler.onRenderEnded(j2!, { failure: { cause: "render_failed", detail: "/srv/models/x/unet/model.onnx: Non-zero status" } });
    scheduler.onWorkerLost([j3!], { cause: "worker_lost", detail: "worker crashed" });
    expect(await failure(nan!)).toMatchObject({ status: 503, type: "server_error", code: null });
    const internal = await failure(broken!);
    expect(internal).toMatchObject({ status: 500, type: "server_error", code: null });
    expect(JSON.stringify(internal.toBody())).not.toContain("/srv/models");
    expect(await failure(lost!)).toMatchObject({ status: 503, code: null, message: "The model's worker failed; retry the request" });
    const none = setup(8, 0);
    const [waiting] = none.submit([1]);
    none.scheduler.onUnservable(IMAGE, { cause: "load_failed", detail: "bad graph" });
    expect(await failure(waiting!)).toMatchObject({ status: 503, code: "backend_unavailable" });
  });

  test("shutdown fails every render still waiting or running with server_shutting_down", async () => {
    const { scheduler, submit } = setup(8, 1);
    const streams = submit([1, 2]);
    scheduler.failAll(ApiError.shuttingDown());
    for (const s of streams) expect(await failure(s)).toMatchObject({ status: 503, code: "server_shutting_down" });
    expect(scheduler.load()).toEqual({ waiting: 0, active: 0 });
  });
});
