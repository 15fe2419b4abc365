// An ONNX Runtime output the worker has finished reading is freed at once: releaseBuffer detaches its whole buffer,
// and the engine releases every pass's logits after each row has sampled from them (its tokens are unchanged).
import { describe, expect, test } from "bun:test";
import type { StepInputs } from "../../../workers/text/batch-inputs.ts";
import { Engine } from "../../../workers/text/engine.ts";
import type { BatchKv } from "../../../workers/text/kv-cache.ts";
import type { ForwardResult } from "../../../workers/text/model-runner.ts";
import { releaseBuffer, releaseLogits, releaseReplacedKv } from "../../../workers/text/release-buffer.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { engineHarness, tokenBytes, tokensOf } from "./engine-harness.ts";
import { FakeRunner, referenceGreedy } from "./fake-runner.ts";

describe("releaseBuffer", () => {
  test("detaches the view's whole buffer: every view of it reads as empty; nothing, or a second call, is a no-op", () => {
    const data = new Float32Array(1024).fill(1);
    const other = new Float32Array(data.buffer, 16, 4);
    releaseBuffer(data.subarray(8, 12));
    expect([data.length, other.length, (data.buffer as ArrayBuffer & { detached: boolean }).detached]).toEqual([0, 0, true]);
    releaseBuffer(data);
    releaseBuffer(undefined);
  });

  test("releaseLogits frees a pass's logits and a scored prompt's positions", () => {
    const out = { logits: new Float32Array(8), positions: new Float32Array(16) };
    releaseLogits(out);
    expect([out.logits.length, out.positions.length]).toEqual([0, 0]);
    releaseLogits(null);
  });
});

describe("releaseReplacedKv", () => {
  const tensor = (data: Float32Array | Uint16Array) => ({ data, dims: [1, 1, data.length, 1] });
  const detached = (a: ArrayBufferView) => (a.buffer as ArrayBuffer & { detached: boolean }).detached;

  test("frees every buffer of the replaced caches that no kept cache uses; views of a kept buffer stay", () => {
    const old = { tensors: [tensor(new Float32Array(64)), tensor(new Uint16Array(32))] };
    const shared = new Float32Array(128);
    const compacted = { tensors: [tensor(shared.subarray(0, 64))] };
    const before = { tensors: [tensor(shared)] };
    const freed = releaseReplacedKv([old, before, null], [compacted, null]);
    expect(freed).toBe(64 * 4 + 32 * 2);
    expect([detached(old.tensors[0]!.data), detached(old.tensors[1]!.data), detached(shared)]).toEqual([true, true, false]);
    // Already freed, or a device runner's tensor (no host array): nothing to do.
    expect(releaseReplacedKv([old, { tensors: [{ location: "gpu-buffer" }] }], [])).toBe(0);
  });
});

/** The fake model, keeping every logits array it handed out. */
class KeepingRunner extends FakeRunner {
  readonly handed: Float32Array[] = [];
  override async forward(inputs: StepInputs, past: BatchKv | null): Promise<ForwardResult> {
    const out = await super.forward(inputs, past);
    this.handed.push(out.logits);
    return out;
  }
}

describe("the engine", () => {
  test("releases each pass's logits once its rows have sampled, prefill and decode alike; the tokens are the model's", async () => {
    const runner = new KeepingRunner();
    const deltas: string[] = [];
    const engine = new Engine(runner, { maxBatch: 2, tokenBytes, emit: (d) => deltas.push(...d.map((x) => x.text)) });
    engine.add("a", [1, 2, 3], greedyParams(5));
    for (let i = 0; i < 100 && engine.hasWork(); i++) await engine.step();
    expect(tokensOf(deltas.join(""))).toEqual(referenceGreedy([1, 2, 3], 5));
    // One prefill and four decode passes, each one's logits freed.
    expect(runner.handed.map((l) => l.length)).toEqual([0, 0, 0, 0, 0]);
  });
});

/** The fake model, keeping every cache it handed out, by pass. */
class PresentKeepingRunner extends FakeRunner {
  readonly passes: Float32Array[][] = [];
  override async forward(inputs: StepInputs, past: BatchKv | null): Promise<ForwardResult> {
    const out = await super.forward(inputs, past);
    this.passes.push(out.present.map((t) => t.data as Float32Array));
    return out;
  }
}

describe("the engine's host cache", () => {
  test("a join, a leave and each pass free the caches the next batch no longer uses, the last one's too; every sequence's tokens stay the model's", async () => {
    const runner = new PresentKeepingRunner();
    const { engine, tokens, run } = engineHarness(runner, { maxBatch: 4 });
    engine.add("a", [1, 2, 3], greedyParams(12));
    for (let i = 0; i < 3; i++) await engine.step();
    engine.add("b", [4, 5], greedyParams(6));
    engine.add("c", [6, 7, 8, 9], greedyParams(9));
    await run("a", "b", "c");
    expect([tokens("a"), tokens("b"), tokens("c")]).toEqual([referenceGreedy([1, 2, 3], 12), referenceGreedy([4, 5], 6), referenceGreedy([6, 7, 8, 9], 9)]);
    // Every pass's cache is let go once the next batch no longer uses it, the last one's (whose rows all finished) too.
    const detached = runner.passes.map((p) => p.map((d) => (d.buffer as ArrayBuffer & { detached: boolean }).detached));
    expect(detached.flat().every(Boolean)).toBe(true);
  });
});
