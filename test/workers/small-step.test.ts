// A worker loaded with int8 plus q4 for small passes: each pass runs on exactly the session its size picks, and the
// small passes on q4's one-token graph (model_step_q4.onnx) when the folder has it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildModel, PRESETS } from "../../src/modelgen/index.ts";
import { Q4_CORRELATION } from "../../src/modelgen/gpu-bounds.ts";
import { prefillInputs } from "../../workers/text/batch-inputs.ts";
import { type LoadedModel, loadModel } from "../../workers/text/load-model.ts";
import type { ModelRunner } from "../../workers/text/model-runner.ts";
import { PrefixCache } from "../../workers/text/prefix-cache.ts";
import { PrefixReuse } from "../../workers/text/prefix-reuse.ts";
import { greedyParams } from "../helpers/sampling.ts";
import { correlation } from "../unit/modelgen/ort-driver.ts";
import { engineHarness } from "../unit/workers/engine-harness.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-small-step-"));
const dir = join(root, "kiln-tiny-v1");
let mixed: LoadedModel, q4: LoadedModel, q4Step: LoadedModel, int8: LoadedModel;

beforeAll(async () => {
  await buildModel({ spec: PRESETS.tiny!, dtypes: ["int8", "q4"], outDir: dir });
  const base = { id: "kiln-tiny-v1", dir, threads: 1, maxBatch: 4 };
  mixed = await loadModel({ ...base, dtype: "int8", small: { dtype: "q4", maxTokens: 2 } });
  q4 = await loadModel({ ...base, dtype: "q4" });
  // q4 whose own passes of ≤ 2 tokens run on its one-token graph: what the mixed worker's small passes must equal.
  q4Step = await loadModel({ ...base, dtype: "q4", small: { dtype: "q4", maxTokens: 2 } });
  int8 = await loadModel({ ...base, dtype: "int8" });
}, 120_000);

afterAll(async () => {
  await Promise.all([mixed, q4, q4Step, int8].map((m) => m?.dispose()));
  rmSync(root, { recursive: true, force: true });
});

const logitsOf = async (m: LoadedModel, prompts: number[][]) => (await m.runner.forward(prefillInputs(prompts, m.runner.padId), null)).logits;

describe("small-step format", () => {
  test("passes of ≤ maxTokens tokens, one a row, give q4's one-token graph's logits bit for bit, others int8's", async () => {
    const cases = [[[17]], [[17, 300]], [[17], [42]], [[17, 300, 5]], [[17], [42], [99]]];
    for (const prompts of cases) {
      const width = Math.max(...prompts.map((p) => p.length));
      // The one-token graph takes one new token a row: a 2-token pass of one row runs on int8.
      const small = prompts.length * width <= 2 && width === 1;
      const want = await logitsOf(small ? q4Step : int8, prompts);
      const other = await logitsOf(small ? int8 : q4, prompts);
      const got = await logitsOf(mixed, prompts);
      expect(Array.from(got)).toEqual(Array.from(want));
      // The two formats really differ, so the equality above tells which session ran.
      expect(Array.from(got)).not.toEqual(Array.from(other));
    }
    expect(mixed.runner.smallRuns).toBe(2);
  });

  test("the small passes run on the one-token graph: within q4's bound of q4's main graph, not its bits", async () => {
    const prompt = [[5, 6, 7, 8, 9, 10, 11]];
    const step = { batch: 1, seqLen: 1, pastLen: 7, inputIds: BigInt64Array.of(12n), attentionMask: new BigInt64Array(8).fill(1n), positionIds: BigInt64Array.of(7n) };
    const decode = async (m: LoadedModel) => {
      const first = await m.runner.forward(prefillInputs(prompt, m.runner.padId), null);
      return (await m.runner.forward(step, { tensors: first.present, lens: [7], length: 7 })).logits;
    };
    const before = q4Step.runner.smallRuns;
    const got = await decode(q4Step);
    const whole = await decode(q4);
    expect(q4Step.runner.smallRuns).toBe(before + 1);
    expect(correlation(got, whole)).toBeGreaterThan(Q4_CORRELATION);
    expect(Array.from(got)).not.toEqual(Array.from(whole));
  });

  test("a decode step after a large prefill runs on q4 over the int8 prefill's cache", async () => {
    const prompt = [[5, 6, 7, 8, 9]];
    // Two prefills: a past is forwarded once (a cache kept in place takes the new column into its spare room).
    const first = await mixed.runner.forward(prefillInputs(prompt, mixed.runner.padId), null);
    const again = await mixed.runner.forward(prefillInputs(prompt, mixed.runner.padId), null);
    const step = { batch: 1, seqLen: 1, pastLen: 5, inputIds: BigInt64Array.of(11n), attentionMask: new BigInt64Array(6).fill(1n), positionIds: BigInt64Array.of(5n) };
    const before = mixed.runner.smallRuns;
    const got = await mixed.runner.forward(step, { tensors: first.present, lens: [5], length: 5 });
    const want = await q4Step.runner.forward(step, { tensors: again.present, lens: [5], length: 5 });
    expect(mixed.runner.smallRuns).toBe(before + 1);
    expect(Array.from(got.logits)).toEqual(Array.from(want.logits));
    // kiln's graphs keep the cache in place: the step's column went into the prefill's spare capacity.
    expect(got.present[0]).toBe(first.present[0]!);
    expect(got.present[0]!.dims[2]).toBeGreaterThanOrEqual(6);
  });
});

describe("prefix cache over int8 and q4 passes", () => {
  test("a hit's short rest runs on q4 over the int8 prefill's cached KV, within q4's bound of the fresh prefill", async () => {
    const prompt = Array.from({ length: 40 }, (_, i) => (i * 53 + 7) % 2000);
    const fresh = await logitsOf(mixed, [prompt]);
    const passes: number[] = [];
    const logits: Float32Array[] = [];
    const inner = mixed.runner;
    const runner: ModelRunner = {
      vocabSize: inner.vocabSize,
      maxContext: inner.maxContext,
      padId: inner.padId,
      spareColumns: inner.spareColumns,
      async forward(inputs, past) {
        const out = await inner.forward(inputs, past);
        passes.push(inputs.seqLen * inputs.batch);
        logits.push(out.logits.slice(0, out.vocab));
        return out;
      },
    };
    const h = engineHarness(runner, { maxBatch: 2, prefix: new PrefixReuse(new PrefixCache(16, 1 << 26), "kiln-tiny-v1\0int8\0q4<=2") });
    const scope = { scope: "team:1", publicTokens: 0 };
    h.engine.add("first", prompt, greedyParams(1), undefined, scope);
    await h.run("first");
    const before = mixed.runner.smallRuns;
    h.engine.add("again", prompt, greedyParams(1), undefined, scope);
    await h.run("again");
    // The repeat ran one token on q4 over 39 cached positions the int8 prefill computed.
    expect(h.finish("again")?.cachedTokens).toBe(39);
    expect(passes.at(-1)).toBe(1);
    expect(mixed.runner.smallRuns).toBe(before + 1);
    expect(correlation(logits.at(-1)!, fresh)).toBeGreaterThan(Q4_CORRELATION);
    expect(correlation(logits[0]!, fresh)).toBeGreaterThan(0.99999);
  });
});
