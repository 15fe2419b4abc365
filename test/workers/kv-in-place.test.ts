// kiln's graphs return only each pass's new keys and values, and the runner keeps the cache in place (spare columns,
// masked, appended to). Checked against the same graph driven the classic way (whole present cache returned each
// pass): same logits within fp32 reordering error, and the same greedy tokens through the engine with joins, leaves,
// chunked prefill and capacity growth.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { decodeInputs, prefillInputs } from "../../workers/text/batch-inputs.ts";
import { Engine } from "../../workers/text/engine.ts";
import type { BatchKv } from "../../workers/text/kv-cache.ts";
import { loadModel } from "../../workers/text/load-model.ts";
import { type MakeTensor, OrtRunner, type OrtSessionLike } from "../../workers/text/ort-runner.ts";
import { greedyParams } from "../helpers/sampling.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";

let inPlace: OrtRunner, copying: OrtRunner;
let tokenBytes: (id: number) => Uint8Array;

beforeAll(async () => {
  const dir = await tinyModelDir();
  const session = (await ort.InferenceSession.create(join(dir, "onnx", "model.onnx"), { intraOpNumThreads: 1 })) as unknown as OrtSessionLike;
  const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  const makeTensor: MakeTensor = (type, data, dims) => new ort.Tensor(type as never, data as never, dims);
  // The same session with its step outputs hidden: the runner then takes the whole present cache each pass.
  const classic: OrtSessionLike = {
    inputNames: session.inputNames,
    inputMetadata: session.inputMetadata,
    outputNames: session.outputNames.filter((n) => !n.startsWith("step_key_values.")),
    run: (feeds, fetches) => session.run(feeds, fetches),
  };
  inPlace = new OrtRunner(session, config, makeTensor, config.vocab_size, 0);
  copying = new OrtRunner(classic, config, makeTensor, config.vocab_size, 0);
  tokenBytes = (await loadModel({ id: "kiln-tiny-v1", dir, dtype: "fp32", threads: 1, maxBatch: 1 })).tokenBytes;
});

const argmax = (x: Float32Array) => x.reduce((best, v, i) => (v > x[best]! ? i : best), 0);

describe("KV cache kept in place", () => {
  test("kiln's graph is driven in place, the classic one by copies", () => {
    expect(inPlace.layout.stepNames?.[0]).toBe("step_key_values.0.key");
    expect(copying.layout.stepNames).toBeNull();
  });

  test("a left-padded batch decodes past several capacity growths with the classic path's logits", async () => {
    const prompts = [[5, 6, 7, 8, 9, 10, 11], [300, 301], [42, 43, 44, 45]];
    let a = await inPlace.forward(prefillInputs(prompts, 0), null);
    let b = await copying.forward(prefillInputs(prompts, 0), null);
    const lens = prompts.map((p) => p.length);
    let kvA: BatchKv = { tensors: a.present, lens, length: 7 };
    let kvB: BatchKv = { tensors: b.present, lens, length: 7 };
    const capacities = new Set<number>();
    for (let step = 0; step < 90; step++) {
      let worst = 0;
      for (let i = 0; i < a.logits.length; i++) worst = Math.max(worst, Math.abs(a.logits[i]! - b.logits[i]!));
      expect(worst).toBeLessThan(1e-3);
      const tokens = prompts.map((_, r) => argmax(b.logits.subarray(r * b.vocab, (r + 1) * b.vocab)));
      expect(prompts.map((_, r) => argmax(a.logits.subarray(r * a.vocab, (r + 1) * a.vocab)))).toEqual(tokens);
      a = await inPlace.forward(decodeInputs(tokens, kvA.lens, kvA.length), kvA);
      b = await copying.forward(decodeInputs(tokens, kvB.lens, kvB.length), kvB);
      const next = kvA.lens.map((l) => l + 1);
      kvA = { tensors: a.present, lens: next, length: kvA.length + 1 };
      kvB = { tensors: b.present, lens: next, length: kvB.length + 1 };
      capacities.add(a.present[0]!.dims[2]);
      expect(b.present[0]!.dims[2]).toBe(kvB.length);
      expect(a.present[0]!.dims[2]).toBeGreaterThanOrEqual(kvA.length);
    }
    // The cache grew (7 + 32 columns at first) and was then written in place between growths.
    expect(capacities.size).toBeGreaterThan(1);
    expect(capacities.size).toBeLessThan(10);
  });

  test("through the engine (staggered joins, leaves, a chunked prompt): the same greedy text as the classic path", async () => {
    const run = async (runner: OrtRunner) => {
      const text = new Map<string, string>();
      const engine = new Engine(runner, {
        maxBatch: 3,
        tokenBytes,
        prefillTokenBudget: 16,
        emit: (deltas) => {
          for (const d of deltas) text.set(d.seqId, (text.get(d.seqId) ?? "") + d.text);
        },
      });
      const long = Array.from({ length: 40 }, (_, i) => (i * 37 + 11) % 2000);
      engine.add("a", [5, 6, 7, 8, 9], greedyParams(60));
      engine.add("b", [17], greedyParams(10));
      for (let i = 0; i < 4; i++) await engine.step();
      engine.add("long", long, greedyParams(45));
      engine.add("c", [99, 98, 97], greedyParams(50));
      for (let i = 0; i < 6; i++) await engine.step();
      engine.add("d", [3, 1, 4, 1, 5, 9, 2, 6], greedyParams(30));
      while (engine.hasWork()) await engine.step();
      return text;
    };
    const want = await run(copying);
    const got = await run(inPlace);
    expect([...got.keys()].sort()).toEqual(["a", "b", "c", "d", "long"]);
    for (const [id, text] of want) {
      expect(text.length).toBeGreaterThan(0);
      expect(got.get(id)).toBe(text);
    }
  });

  test("a pass's step outputs are freed once written into the cache; the cache keeps their values", async () => {
    const dir = await tinyModelDir();
    const session = (await ort.InferenceSession.create(join(dir, "onnx", "model.onnx"), { intraOpNumThreads: 1 })) as unknown as OrtSessionLike;
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    const outputs: Record<string, { data: unknown }>[] = [];
    const watched: OrtSessionLike = { ...session, inputNames: session.inputNames, inputMetadata: session.inputMetadata, outputNames: session.outputNames, run: async (feeds, fetches) => {
      const out = await session.run(feeds, fetches);
      outputs.push(out as never);
      return out;
    } };
    const runner = new OrtRunner(watched, config, (type, data, dims) => new ort.Tensor(type as never, data as never, dims), config.vocab_size, 0);
    const prompt = [5, 6, 7, 8];
    const first = await runner.forward(prefillInputs([prompt], 0), null);
    const reference = await inPlace.forward(prefillInputs([prompt], 0), null);
    const steps = Object.entries(outputs[0]!).filter(([name]) => name.startsWith("step_key_values."));
    expect(steps.length).toBe(runner.layout.stepNames!.length);
    for (const [, v] of steps) expect((v.data as Float32Array).length).toBe(0);
    // The values were copied into the runner's cache before their buffer went: the next step decodes as the reference's.
    const next = await runner.forward(decodeInputs([9], [4], 4), { tensors: first.present, lens: [4], length: 4 });
    const expected = await inPlace.forward(decodeInputs([9], [4], 4), { tensors: reference.present, lens: [4], length: 4 });
    expect(Array.from(next.logits)).toEqual(Array.from(expected.logits));
  });
});
