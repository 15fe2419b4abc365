// The image backend over fake workers: the load spec each worker gets, including the device start-up placed the model on.
import { describe, expect, test } from "bun:test";
import { memoryLogger } from "../../../src/log/logger.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import type { DiffusionLayout } from "../../../src/models/diffusion-layout.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import { ImageBackend } from "../../../src/scheduler/image-backend.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";
import { FakeWorker } from "./fake-worker.ts";

const layout: DiffusionLayout = {
  resolution: 128, sizeMultiple: 16, vaeScale: 8, sizes: [{ ratio: "1:1", width: 128, height: 128 }, { ratio: "2:1", width: 256, height: 128 }],
  steps: { low: 2, medium: 4, high: 8 }, guidanceScale: 1, strength: 0.6, maxBatch: 3, textLength: 77, edits: true,
};
const image = (id: string, placement?: ModelEntry["placement"]): ModelEntry => ({
  ...parseManifest(fakeManifest(id), ["fp32"]),
  dir: `/models/${id}`,
  diffusion: layout,
  ...(placement ? { placement } : {}),
});

async function loadSpecs(models: ModelEntry[]): Promise<unknown[]> {
  const workers: FakeWorker[] = [];
  const backend = new ImageBackend(models, {
    workerUrl: "fake:worker",
    workersPerModel: 1,
    threads: 2,
    logger: memoryLogger(),
    spawnWorker: () => {
      const w = new FakeWorker();
      workers.push(w);
      return w;
    },
    onRendered: () => {},
    onRenderEnded: () => {},
    onLost: () => {},
    onHealth: () => {},
    onReady: () => {},
    onUnservable: () => {},
  });
  const start = backend.workers.start();
  workers.forEach((w, i) => w.reply({ type: "loaded", modelId: models[i]!.id, ms: 1 }));
  await start;
  await backend.workers.shutdown(5);
  return workers.map((w) => w.posted[0]);
}

describe("ImageBackend", () => {
  test("each worker loads on the device the model was placed on; unplaced models load on the CPU", async () => {
    const gpu = image("gpu-image-v1", { device: "webgpu", dtype: "fp32", reason: "auto" });
    const cpu = image("cpu-image-v1", { device: "cpu", dtype: "fp32", reason: "auto" });
    const unplaced = image("plain-image-v1");
    const sizes = [{ width: 128, height: 128 }, { width: 256, height: 128 }];
    expect(await loadSpecs([gpu, cpu, unplaced])).toEqual([
      // The webgpu worker's seat at the device, where it takes turns with every other worker there.
      { type: "load", model: { id: gpu.id, dir: "/models/gpu-image-v1", threads: 2, device: "webgpu", maxBatch: 3, sizes, textLength: 77 }, seat: { buffer: expect.any(SharedArrayBuffer), seat: expect.any(Number) } },
      { type: "load", model: { id: cpu.id, dir: "/models/cpu-image-v1", threads: 2, device: "cpu", maxBatch: 3, sizes, textLength: 77 } },
      { type: "load", model: { id: unplaced.id, dir: "/models/plain-image-v1", threads: 2, device: "cpu", maxBatch: 3, sizes, textLength: 77 } },
    ]);
  });
});
