// The text backend over fake workers: its load spec, add/cancel/step messages and batch slots (max batch, left padding).
import { describe, expect, test } from "bun:test";
import { memoryLogger } from "../../../src/log/logger.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import type { PrefixCacheStats, SeqFinish } from "../../../src/protocol/text.ts";
import { Admissions } from "../../../src/scheduler/admissions.ts";
import { maxBatchOf, TextBackend } from "../../../src/scheduler/text-backend.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { FakeWorker } from "./fake-worker.ts";

const entry = (id: string, leftPadding: "exact" | "unsafe"): ModelEntry => ({
  ...parseManifest(fakeManifest(id, { batching: { max_batch: 3, left_padding: leftPadding } }), ["fp32"]),
  dir: `/models/${id}`,
});
const exact = entry("exact-model-v1", "exact");
const unsafe = entry("unsafe-model-v1", "unsafe");

async function started(admissions?: Admissions, models: ModelEntry[] = [exact, unsafe]) {
  const workers: FakeWorker[] = [];
  const steps: { finished: SeqFinish[]; freeAtDelivery: number }[] = [];
  const cache: [number, string, PrefixCacheStats, number][] = [];
  const text: TextBackend = new TextBackend(models, {
    workerUrl: "fake:worker",
    workersPerModel: 1,
    threads: 2,
    logger: memoryLogger(),
    spawnWorker: () => {
      const w = new FakeWorker();
      workers.push(w);
      return w;
    },
    onStep: (_deltas, finished) => steps.push({ finished, freeAtDelivery: text.slots()[0]!.free }),
    onCacheStats: (workerId, model, stats) => cache.push([workerId, model, stats, steps.length]),
    ...(admissions ? { admissions } : {}),
    onLost: () => {},
    onHealth: () => {},
    onReady: () => {},
    onUnservable: () => {},
  });
  const start = text.workers.start();
  workers.forEach((w, i) => w.reply({ type: "loaded", modelId: models[i]!.id, ms: 1 }));
  await start;
  return { text, workers, steps, cache };
}

describe("TextBackend", () => {
  test("a model batches up to its max only when its left padding is exact; on the webgpu device every model batches", () => {
    expect(maxBatchOf(exact)).toBe(3);
    expect(maxBatchOf(unsafe)).toBe(1);
    expect(maxBatchOf({ ...unsafe, placement: { device: "webgpu", dtype: "q4f16", reason: "" } })).toBe(8);
    expect(maxBatchOf({ ...exact, placement: { device: "webgpu", dtype: "q4f16", reason: "" } })).toBe(3);
  });

  test("on the CPU a GroupQueryAttention format batches right-padded rows up to the max, and its worker is told so; another format of the folder does not", async () => {
    const gqa: ModelEntry = { ...unsafe, id: "gqa-model-v1", dir: "/models/gqa-model-v1", batching: { ...unsafe.batching, rightPadded: ["fp32"] } };
    expect(maxBatchOf(gqa)).toBe(3);
    expect(maxBatchOf({ ...gqa, placement: { device: "cpu", dtype: "int8", reason: "" } })).toBe(1);
    expect(maxBatchOf({ ...gqa, placement: { device: "webgpu", dtype: "q4f16", reason: "" } })).toBe(8);
    const { text, workers } = await started(undefined, [gqa]);
    expect(workers[0]!.posted[0]).toEqual({
      type: "load",
      model: { id: gqa.id, dir: "/models/gqa-model-v1", dtype: "fp32", device: "cpu", threads: 2, maxBatch: 3, contextLength: gqa.contextLength, rows: "right-padded" },
    });
    expect(text.slots()).toMatchObject([{ model: gqa.id, free: 3 }]);
    await text.workers.shutdown(5);
  });

  test("each worker loads the model's folder, dtype, threads, batch size and the context requests are admitted against", async () => {
    const { text, workers } = await started();
    expect(workers.map((w) => w.posted[0])).toEqual([
      { type: "load", model: { id: exact.id, dir: "/models/exact-model-v1", dtype: "fp32", device: "cpu", threads: 2, maxBatch: 3, contextLength: exact.contextLength } },
      { type: "load", model: { id: unsafe.id, dir: "/models/unsafe-model-v1", dtype: "fp32", device: "cpu", threads: 2, maxBatch: 1, contextLength: unsafe.contextLength } },
    ]);
    await text.workers.shutdown(5);
  });

  test("an add tells the worker how many more requests for its model are being prepared, and says nothing when none are", async () => {
    const admissions = new Admissions();
    const { text, workers } = await started(admissions);
    const ends = [admissions.begin(exact.id), admissions.begin(exact.id), admissions.begin(unsafe.id)];
    text.add(1, "s1", [5], greedyParams(2));
    ends[0]!();
    ends[1]!();
    text.add(1, "s2", [6], greedyParams(2));
    // Another model's requests are not this worker's to wait for.
    text.add(2, "s3", [7], greedyParams(2));
    expect(workers[0]!.posted.slice(1)).toEqual([
      { type: "add", seqId: "s1", promptIds: [5], params: greedyParams(2), incoming: 2 },
      { type: "add", seqId: "s2", promptIds: [6], params: greedyParams(2) },
    ]);
    expect(workers[1]!.posted.slice(1)).toEqual([{ type: "add", seqId: "s3", promptIds: [7], params: greedyParams(2), incoming: 1 }]);
    await text.workers.shutdown(5);
  });

  test("slots shrink as sequences are added and free up when a step reports them finished, before the step is delivered", async () => {
    const { text, workers, steps } = await started();
    expect(text.slots()).toEqual([{ workerId: 1, model: exact.id, free: 3, spare: 3 }, { workerId: 2, model: unsafe.id, free: 1, spare: 1 }]);
    text.add(1, "s1", [5, 6], greedyParams(2));
    text.add(1, "s2", [7], greedyParams(2));
    text.add(2, "s3", [8], greedyParams(2));
    text.cancel(1, "s2");
    expect(workers[0]!.posted.slice(1)).toEqual([
      { type: "add", seqId: "s1", promptIds: [5, 6], params: greedyParams(2) },
      { type: "add", seqId: "s2", promptIds: [7], params: greedyParams(2) },
      { type: "cancel", seqId: "s2" },
    ]);
    expect(text.slots().map((s) => s.free)).toEqual([1, 0]);
    const finish: SeqFinish = { seqId: "s2", reason: "cancelled", promptTokens: 1, outputTokens: 0 };
    workers[0]!.reply({ type: "step", deltas: [{ seqId: "s1", text: "a", tokens: 1 }], finished: [finish] });
    expect(steps).toEqual([{ finished: [finish], freeAtDelivery: 2 }]);
    await text.workers.shutdown(5);
  });

  test("background sequences hold spare rows only: interactive ones may still take every row they hold, and the lane goes to the worker", async () => {
    const { text, workers } = await started();
    text.add(1, "b1", [5], greedyParams(2), undefined, undefined, "batch");
    text.add(1, "f1", [6], greedyParams(2), undefined, undefined, "flex");
    text.add(1, "d1", [7], greedyParams(2), undefined, undefined, "default");
    expect(text.slots()[0]).toEqual({ workerId: 1, model: exact.id, free: 2, spare: 0 });
    text.add(1, "p1", [8], greedyParams(2), undefined, undefined, "priority");
    expect(text.slots()[0]).toEqual({ workerId: 1, model: exact.id, free: 1, spare: 0 });
    expect(workers[0]!.posted.slice(1).map((m) => [m.seqId, m.lane])).toEqual([["b1", "batch"], ["f1", "flex"], ["d1", undefined], ["p1", "priority"]]);
    workers[0]!.reply({ type: "step", deltas: [], finished: [{ seqId: "b1", reason: "stop", promptTokens: 1, outputTokens: 2 }] });
    expect(text.slots()[0]).toEqual({ workerId: 1, model: exact.id, free: 1, spare: 0 });
    workers[0]!.reply({ type: "step", deltas: [], finished: [{ seqId: "p1", reason: "stop", promptTokens: 1, outputTokens: 2 }] });
    expect(text.slots()[0]).toEqual({ workerId: 1, model: exact.id, free: 2, spare: 1 });
    await text.workers.shutdown(5);
  });

  test("a step's prefix-cache figures go out with the worker's id and model, before the step is delivered; steps without them send none", async () => {
    const { text, workers, steps, cache } = await started();
    const stats: PrefixCacheStats = { blocks: 4, bytes: 4096, evictions: 1, promptTokens: 80, hitTokens: 48, prefillTokens: 32 };
    workers[1]!.reply({ type: "step", deltas: [], finished: [] });
    workers[1]!.reply({ type: "step", deltas: [], finished: [], cache: stats });
    // The third number is how many steps were delivered when the figures came: the one without them only.
    expect(cache).toEqual([[2, unsafe.id, stats, 1]]);
    expect(steps).toHaveLength(2);
    await text.workers.shutdown(5);
  });
});
