// The webgpu device path on the tiny model (Mesa's software Vulkan driver here, a real GPU on a GPU box): its
// next-token logits track the fp32 CPU graph within the formats' bounds, greedy batched equals greedy solo through
// the engine (joins, leaves, a cancel, capacity growth), a decode step moves only ids, lengths and logits, a finished
// batch leaves nothing on the device, and the prefix cache serves the device from blocks read back to the host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildModel, PRESETS } from "../../../src/modelgen/index.ts";
import { fp16Correlation, Q4_CORRELATION } from "../../../src/modelgen/gpu-bounds.ts";
import { chunkInputs, decodeInputs, prefillInputs } from "../../../workers/text/batch-inputs.ts";
import { loadDeviceModel } from "../../../workers/text/device/load-device-model.ts";
import type { DeviceRunner } from "../../../workers/text/device/device-runner.ts";
import { loadModel } from "../../../workers/text/load-model.ts";
import type { ModelRunner } from "../../../workers/text/model-runner.ts";
import { PrefixCache } from "../../../workers/text/prefix-cache.ts";
import { PrefixReuse } from "../../../workers/text/prefix-reuse.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { correlation } from "../../unit/modelgen/ort-driver.ts";
import { engineHarness } from "../../unit/workers/engine-harness.ts";
import { expectBatchedEqualsSolo } from "./batched-solo.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-device-runner-"));
const dir = join(root, "kiln-tiny-v1");
const spec = PRESETS.tiny!;
const loaded: { dispose(): Promise<void> }[] = [];
let cpu: ModelRunner;
let fp16: DeviceRunner;
let q4f16: DeviceRunner;

const load = async (dtype: string) => {
  const m = await loadDeviceModel({ id: spec.id, dir, dtype, device: "webgpu", threads: 1, maxBatch: 16 });
  loaded.push(m);
  return m;
};

beforeAll(async () => {
  await buildModel({ spec, dtypes: ["fp32", "fp16", "q4f16"], outDir: dir });
  const c = await loadModel({ id: spec.id, dir, dtype: "fp32", threads: 1, maxBatch: 16 });
  loaded.push(c);
  cpu = c.runner;
  fp16 = (await load("fp16")).runner;
  q4f16 = (await load("q4f16")).runner;
}, 300_000);

afterAll(async () => {
  for (const m of loaded) await m.dispose();
  rmSync(root, { recursive: true, force: true });
});

const argmax = (x: Float32Array) => x.reduce((best, v, i) => (v > x[best]! ? i : best), 0);

/**
 * A 32-token teacher-forced run (an 8-token prompt, then 24 tokens the reference chose): each step's next-token
 * logits of `runner` against the reference's. Returns the worst correlation and how often the argmax agreed.
 */
async function teacherForced(runner: ModelRunner<unknown>, reference: ModelRunner<unknown>) {
  const prompt = [3, 14, 15, 92, 65, 35, 89, 79];
  let a = await runner.forward(prefillInputs([prompt], 0), null);
  let b = await reference.forward(prefillInputs([prompt], 0), null);
  let len = prompt.length;
  let minCorr = 1, agree = 0, steps = 0;
  for (;;) {
    minCorr = Math.min(minCorr, correlation(a.logits, b.logits));
    const token = argmax(b.logits);
    if (argmax(a.logits) === token) agree++;
    steps++;
    if (len === 32) break;
    a = await runner.forward(decodeInputs([token], [len], len), { tensors: a.present, lens: [len], length: len });
    b = await reference.forward(decodeInputs([token], [len], len), { tensors: b.present, lens: [len], length: len });
    len++;
  }
  return { minCorr, agree, steps };
}

describe("the webgpu device path", () => {
  test("fp16 logits track the fp32 CPU graph within fp16's bound; q4f16 within q4's", async () => {
    const f = await teacherForced(fp16, cpu);
    expect(f.steps).toBe(25);
    expect(f.minCorr).toBeGreaterThan(fp16Correlation(spec));
    expect(f.agree).toBe(25);
    const q = await teacherForced(q4f16, cpu);
    expect(q.minCorr).toBeGreaterThan(Q4_CORRELATION);
    // Prompts longer than one attention pass takes on the device (MAX_PASS_TOKENS): prefilled in pieces, as exact.
    let worst = 1;
    for (const length of [32, 48, 64, 96, 128]) {
      const prompt = Array.from({ length }, (_, j) => (j * 13 + length) % 500);
      const a = await fp16.forward(prefillInputs([prompt], 0), null);
      const b = await cpu.forward(prefillInputs([prompt], 0), null);
      worst = Math.min(worst, correlation(a.logits, b.logits));
      fp16.cache.sweep([]);
    }
    expect(worst).toBeGreaterThan(fp16Correlation(spec));
  }, 120_000);

  test("greedy batched equals greedy solo through the engine: staggered joins, leaves, a cancel and cache growth", async () => {
    await expectBatchedEqualsSolo(q4f16);
  }, 240_000);

  test("a decode step moves token ids, positions and lengths in, one row of logits out, whatever the context", async () => {
    const perStep = async (promptLength: number, rows: number) => {
      const prompts = Array.from({ length: rows }, (_, r) => Array.from({ length: promptLength }, (_, j) => (r * 31 + j * 7) % 500 + 1));
      const first = await fp16.forward(prefillInputs(prompts, 0), null);
      let kv = { tensors: first.present, lens: prompts.map((p) => p.length), length: promptLength };
      // One step to give the cache its capacity, then a measured one.
      const step = async () => {
        const out = await fp16.forward(decodeInputs(Array(rows).fill(1), kv.lens, kv.length), kv);
        kv = { tensors: out.present, lens: kv.lens.map((l) => l + 1), length: kv.length + 1 };
      };
      await step();
      const before = { ...fp16.transfer };
      await step();
      const moved = { toDevice: fp16.transfer.toDevice - before.toDevice, toHost: fp16.transfer.toHost - before.toHost };
      fp16.cache.sweep([]);
      return moved;
    };
    const vocab = spec.vocab;
    for (const rows of [1, 16]) {
      const short = await perStep(8, rows);
      const long = await perStep(160, rows);
      // input_ids and position_ids (int64 each), seqlens_k (int32) and total_sequence_length in; float32 logits out.
      expect(short).toEqual({ toDevice: rows * 8 * 2 + rows * 4 + 4, toHost: rows * vocab * 4 });
      expect(long).toEqual(short);
    }
    expect(fp16.cache.liveCount).toBe(0);
  }, 240_000);

  test("the prefix cache on the device: repeats read their blocks from the host and decode as fresh ones do; a next turn within fp16's bound", async () => {
    const TEAM = { scope: "team", publicTokens: 0 };
    const shared = Array.from({ length: 40 }, (_, i) => (i * 29 + 7) % 1500);
    const prompts: Record<string, number[]> = { a: [...shared, 11, 12], b: [...shared, 13], c: [...shared, 14, 15, 16] };
    const reuse = new PrefixReuse(new PrefixCache(16, 64 * 1024 * 1024), `${spec.id}\0q4f16\0webgpu`, (kv, row, from, n) => q4f16.readColumns(kv as never, row, from, n), q4f16.passAlign);
    const h = engineHarness(q4f16, { maxBatch: 4, budget: 64, prefix: reuse });
    h.engine.add("a", prompts.a!, greedyParams(12), undefined, TEAM);
    await h.run("a");
    expect(h.finish("a")?.cachedTokens).toBeUndefined();
    // Two sequences sharing a's blocks and one unrelated arrive together: each hit is prefilled alone (one-row pasts).
    const other = Array.from({ length: 20 }, (_, i) => (i * 53 + 1) % 1500);
    h.engine.add("b", prompts.b!, greedyParams(12), undefined, TEAM);
    h.engine.add("c", prompts.c!, greedyParams(12), undefined, TEAM);
    h.engine.add("other", other, greedyParams(12), undefined, TEAM);
    await h.run("b", "c", "other");
    // Of the 40 shared positions, the 31 of the device's first prefill pass (hits keep to its passes' bounds).
    expect(h.finish("b")?.cachedTokens).toBe(31);
    expect(h.finish("c")?.cachedTokens).toBe(31);
    // So their passes are the ones a fresh prefill runs, over the same cached values: the same greedy tokens, and
    // "other", uncached, decodes beside them as it does alone.
    for (const [id, prompt] of [["b", prompts.b!], ["c", prompts.c!], ["other", other]] as const) {
      const solo = engineHarness(q4f16, { maxBatch: 1, budget: 64 });
      solo.engine.add(id, prompt, greedyParams(12));
      await solo.run(id);
      expect([id, h.tokens(id)]).toEqual([id, solo.tokens(id)]);
    }
    // The next turn re-sends a's prompt and reply: its decode KV, read back from the device, serves it too.
    const next = [...prompts.a!, ...h.tokens("a").slice(0, 11), 21, 22];
    h.engine.add("next", next, greedyParams(8), undefined, TEAM);
    await h.run("next");
    // a's 42 prompt positions and the 11 reply tokens it fed back (its last token was sampled, never fed): 53, cut to 31.
    expect(h.finish("next")?.cachedTokens).toBe(31);
    expect(q4f16.cache.liveCount).toBe(0);

    // A hit's first logits against a fresh prefill's: equal for a repeat of prefilled positions. A next turn's cached
    // reply was computed by decode steps, not by the passes a fresh prefill runs: two fp16 computations of one graph,
    // within two fp16 errors (twice fp16's noise-to-signal ratio).
    const bound = 1 / Math.sqrt(1 + 2 * (fp16Correlation(spec) ** -2 - 1));
    // next's prompt and the 7 reply tokens it fed: 62 cached positions, replies among them computed by decode steps.
    const longer = [...next, ...h.tokens("next").slice(0, 7), 99];
    for (const [prompt, exact] of [[prompts.b!, true], [prompts.c!, true], [longer, false]] as const) {
      const state = reuse.open(prompt, [], TEAM);
      const cached = reuse.usable(state, prompt.length, true);
      expect(cached).toBe(exact ? 31 : 62);
      const hit = await q4f16.forward(chunkInputs(prompt.slice(cached), cached), reuse.past([state], [cached]) as never);
      const fresh = await q4f16.forward(prefillInputs([prompt], 0), null);
      if (exact) expect(Array.from(hit.logits)).toEqual(Array.from(fresh.logits));
      else expect(correlation(hit.logits, fresh.logits)).toBeGreaterThan(bound);
      q4f16.cache.sweep([]);
    }
    expect(reuse.stats().blocks).toBeGreaterThanOrEqual(4);
  }, 240_000);
});
