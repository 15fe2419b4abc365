// The right-padded runner's batching check, shared by the webgpu device and the CPU GroupQueryAttention path: greedy
// batched equals greedy solo through the engine, with staggered joins, leaves, a cancel and cache growth.
import { expect } from "bun:test";
import type { DeviceRunner } from "../../../workers/text/device/device-runner.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { engineHarness } from "../../unit/workers/engine-harness.ts";

export async function expectBatchedEqualsSolo(runner: DeviceRunner): Promise<void> {
  const prompts: Record<string, number[]> = {
    a: [5, 6, 7, 8, 9],
    b: [17],
    long: Array.from({ length: 40 }, (_, i) => (i * 37 + 11) % 2000),
    c: [99, 98, 97],
    d: [3, 1, 4, 1, 5, 9, 2, 6],
  };
  const lengths: Record<string, number> = { a: 90, b: 10, long: 45, c: 50, d: 30 };
  const solo = new Map<string, number[]>();
  for (const id of Object.keys(prompts)) {
    const h = engineHarness(runner, { maxBatch: 1, budget: 16 });
    h.engine.add(id, prompts[id]!, greedyParams(lengths[id]!));
    await h.run(id);
    solo.set(id, h.tokens(id));
    expect(h.tokens(id)).toHaveLength(lengths[id]!);
  }
  const h = engineHarness(runner, { maxBatch: 4, budget: 16 });
  h.engine.add("a", prompts.a!, greedyParams(lengths.a!));
  h.engine.add("b", prompts.b!, greedyParams(lengths.b!));
  h.engine.add("victim", [7, 7, 7], greedyParams(200));
  for (let i = 0; i < 4; i++) await h.engine.step();
  h.engine.add("long", prompts.long!, greedyParams(lengths.long!));
  h.engine.add("c", prompts.c!, greedyParams(lengths.c!));
  for (let i = 0; i < 6; i++) await h.engine.step();
  h.engine.cancel("victim");
  h.engine.add("d", prompts.d!, greedyParams(lengths.d!));
  await h.run("a", "b", "long", "c", "d", "victim");
  expect(h.finish("victim")?.reason).toBe("cancelled");
  for (const id of Object.keys(prompts)) expect([id, h.tokens(id)]).toEqual([id, solo.get(id)!]);
  // Four rows of different lengths shared decode steps; "a" decoded 95 tokens from 5, past its cache's first capacity.
  expect(Math.max(...h.steps.map((s) => s.decodeRows))).toBe(4);
  // Every batch is gone once the engine is idle: nothing is left in the runner's cache.
  expect(runner.cache.liveCount).toBe(0);
}
