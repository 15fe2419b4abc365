// The scheduler over a fake backend: atomic admission by cost, dispatch, streaming, cancel, lost and unservable sequences.
import { describe, expect, test } from "bun:test";
import { ApiError } from "../../../src/errors/api-error.ts";
import { failureOf } from "../../../src/models/failures.ts";
import type { SamplingParams } from "../../../src/protocol/text.ts";
import type { SlotView } from "../../../src/scheduler/queue.ts";
import { Scheduler, type SeqEvent, type SequenceBackend } from "../../../src/scheduler/scheduler.ts";
import { greedyParams } from "../../helpers/sampling.ts";

const MODEL = "m-model-v1";

class FakeBackend implements SequenceBackend {
  readonly added: { workerId: number; seqId: string }[] = [];
  readonly cancelled: string[] = [];
  /** What the worker holds; a test releases ids as the real supervisor would before reporting them. */
  readonly held = new Set<string>();
  constructor(readonly entryCost: number, readonly maxBatch: number) {}
  slots(): SlotView[] {
    return [{ workerId: 7, model: MODEL, free: this.maxBatch - this.held.size }];
  }
  hasReadyWorker(model: string): boolean {
    return model === MODEL;
  }
  add(workerId: number, seqId: string, _promptIds: number[], _params: SamplingParams): void {
    this.added.push({ workerId, seqId });
    this.held.add(seqId);
  }
  cancel(_workerId: number, seqId: string): void {
    this.cancelled.push(seqId);
  }
}

function setup(limit: number, cost = 1, free = 0) {
  const scheduler = new Scheduler(limit);
  const backend = new FakeBackend(cost, free);
  scheduler.attach(backend);
  const submit = (n: number, signal?: AbortSignal) => scheduler.submit(Array.from({ length: n }, () => ({ model: MODEL, promptIds: [1, 2], params: greedyParams(4), signal })));
  return { scheduler, backend, submit };
}

async function drain(stream: AsyncIterable<SeqEvent>): Promise<SeqEvent[]> {
  const out: SeqEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

async function failure(stream: AsyncIterable<SeqEvent>): Promise<ApiError> {
  try {
    await drain(stream);
  } catch (e) {
    return e as ApiError;
  }
  throw new Error("the stream ended without failing");
}

describe("Scheduler", () => {
  test("the n sequences of a request are admitted together or refused together with 503 service_overloaded", () => {
    const { scheduler, submit } = setup(3);
    expect(submit(2)).toHaveLength(2);
    const refused = (() => {
      try {
        submit(2);
      } catch (e) {
        return e as ApiError;
      }
    })();
    expect(refused).toMatchObject({ status: 503, code: "service_overloaded" });
    expect(scheduler.load()).toEqual({ waiting: 2, active: 0 });
    expect(submit(1)).toHaveLength(1);
  });

  test("each sequence holds the cost its backend's kind sets", () => {
    const { scheduler, submit } = setup(3, 2);
    submit(1);
    expect(() => submit(1)).toThrow(ApiError);
    expect(scheduler.load().waiting).toBe(1);
  });

  test("dispatched sequences stream their deltas and finish; finishing frees budget for the next", async () => {
    const { scheduler, backend, submit } = setup(1, 1, 1);
    const [stream] = submit(1);
    expect(backend.added).toEqual([{ workerId: 7, seqId: expect.stringMatching(/^seq_\d+$/) }]);
    const seqId = backend.added[0]!.seqId;
    backend.held.delete(seqId);
    scheduler.onStep([{ seqId, text: "hi", tokens: 1 }], [{ seqId, reason: "length", promptTokens: 2, outputTokens: 1 }]);
    expect(await drain(stream!)).toEqual([
      { type: "delta", text: "hi", tokens: 1 },
      { type: "finish", finish: { seqId, reason: "length", promptTokens: 2, outputTokens: 1 } },
    ]);
    expect(scheduler.load()).toEqual({ waiting: 0, active: 0 });
    expect(submit(1)).toHaveLength(1);
  });

  test("an abort before dispatch ends the sequence as cancelled and no worker hears of it; after dispatch the worker is told", async () => {
    const { scheduler, backend, submit } = setup(4, 1, 1);
    const running = new AbortController();
    const waiting = new AbortController();
    const [first] = submit(1, running.signal);
    const [second] = submit(1, waiting.signal);
    waiting.abort();
    expect(await drain(second!)).toEqual([{ type: "finish", finish: expect.objectContaining({ reason: "cancelled", outputTokens: 0 }) }]);
    running.abort();
    expect(backend.cancelled).toEqual([backend.added[0]!.seqId]);
    expect(backend.added).toHaveLength(1);
    backend.held.clear();
    scheduler.onStep([], [{ seqId: backend.added[0]!.seqId, reason: "cancelled", promptTokens: 2, outputTokens: 0 }]);
    expect((await drain(first!)).at(-1)).toMatchObject({ type: "finish", finish: { reason: "cancelled" } });
    expect(scheduler.load()).toEqual({ waiting: 0, active: 0 });
  });

  test("a lost worker fails its sequences with 503 backend_unavailable; a model left with no worker fails those still waiting", async () => {
    const { scheduler, backend, submit } = setup(4, 1, 1);
    const [running, queued] = submit(2);
    backend.held.clear();
    const crashed = { cause: "worker_lost" as const, detail: "worker crashed: TypeError at /srv/kiln/workers/engine.ts:12:3" };
    scheduler.onWorkerLost([backend.added[0]!.seqId], crashed);
    const lost = await failure(running!);
    expect(lost).toMatchObject({ status: 503, code: "backend_unavailable", message: "The model's worker failed; retry the request" });
    expect(lost.headers["retry-after"]).toBe("60");
    expect(failureOf(lost)).toEqual(crashed);
    // The freed slot went to the waiting sequence; a new one waits behind it.
    expect(backend.added).toHaveLength(2);
    const [later] = submit(1);
    scheduler.onUnservable(MODEL, { cause: "load_failed", detail: "/models/m/onnx/model.onnx: protobuf parsing failed" });
    expect(await failure(later!)).toMatchObject({ status: 503, code: "backend_unavailable", message: `The model '${MODEL}' could not be loaded; retry later` });
    expect(scheduler.load()).toEqual({ waiting: 0, active: 1 });
    scheduler.onStep([], [{ seqId: backend.added[1]!.seqId, reason: "stop", promptTokens: 2, outputTokens: 0 }]);
    expect(await drain(queued!)).toHaveLength(1);
  });

  test("a sequence the worker ended with an error fails with the fixed 500; the worker's text is only the failure's detail", async () => {
    const { scheduler, backend, submit } = setup(2, 1, 1);
    const [stream] = submit(1);
    const seqId = backend.added[0]!.seqId;
    backend.held.clear();
    const detail = "inference failed: /srv/models/m/onnx/model.onnx: Non-zero status code returned while running MatMul node";
    scheduler.onStep([{ seqId, text: "hi", tokens: 1 }], [{ seqId, reason: "error", promptTokens: 2, outputTokens: 1, message: detail }]);
    const events: SeqEvent[] = [];
    const err = await (async () => {
      try {
        for await (const ev of stream!) events.push(ev);
      } catch (e) {
        return e as ApiError;
      }
    })();
    // What was generated still arrives (it is counted); the end is the failure, not a finish.
    expect(events).toEqual([{ type: "delta", text: "hi", tokens: 1 }]);
    expect(err).toMatchObject({ status: 500, type: "server_error", message: "The model failed while generating; retry the request" });
    expect(failureOf(err)).toEqual({ cause: "generation_failed", detail });
    expect(scheduler.load()).toEqual({ waiting: 0, active: 0 });
  });
});

describe("Scheduler lanes", () => {
  class LaneBackend extends FakeBackend {
    readonly lanes: (string | undefined)[] = [];
    /** Rows the worker has: none until the test opens them. */
    rows = 0;
    override slots(): SlotView[] {
      return [{ workerId: 7, model: MODEL, free: this.rows - this.held.size }];
    }
    override add(workerId: number, seqId: string, promptIds: number[], params: SamplingParams, _media?: unknown, _prefix?: unknown, lane?: string): void {
      super.add(workerId, seqId, promptIds, params);
      this.lanes.push(lane);
    }
  }

  test("a sequence's lane reaches the backend, priority first; flex past the background share is refused while default is admitted", () => {
    const scheduler = new Scheduler(4, 50);
    const backend = new LaneBackend(1, 0);
    scheduler.attach(backend);
    const submit = (lane?: "flex" | "priority" | "batch") => scheduler.submit([{ model: MODEL, promptIds: [1], params: greedyParams(2), ...(lane ? { lane } : {}) }]);
    submit("flex");
    submit("batch");
    expect(() => submit("flex")).toThrow(expect.objectContaining({ status: 503, code: "service_overloaded" }));
    submit();
    submit("priority");
    expect(() => submit()).toThrow(expect.objectContaining({ status: 503, code: "service_overloaded" }));
    backend.rows = 4;
    scheduler.pump();
    expect(backend.lanes).toEqual(["priority", undefined, "flex", "batch"]);
  });
});

