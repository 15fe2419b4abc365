// An ONNX Runtime output the worker has finished reading is freed at once: releaseBuffer detaches its whole buffer,
// and the engine releases every pass's logits after each row has sampled from them (its tokens are unchanged).
import { describe, expect, test } from "bun:test";
import type { StepInputs } from "../../../workers/text/batch-inputs.ts";
import { Engine } from "../../../workers/text/engine.ts";
import type { BatchKv } from "../../../workers/text/kv-cache.ts";
import type { ForwardResult } from "../../../workers/text/model-runner.ts";
import { releaseBuffer, releaseLogits } from "../../../workers/text/release-buffer.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { tokenBytes, tokensOf } from "./engine-harness.ts";
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
