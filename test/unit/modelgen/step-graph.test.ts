// The one-token graph (attention over the cache and the new key apart, no presents) against the main graph on the same
// weights: the same logits and new columns for decode passes under left padding and over a cache with spare (masked)
// columns; a pass of several tokens a row is refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { buildModel } from "../../../src/modelgen/index.ts";
import { stepGraphFile } from "../../../src/models/manifest.ts";
import { argmax, forward, maxAbsDiff, openDriver, type Driver, type Past } from "./ort-driver.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-step-graph-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const dir = join(root, "m");
let main: Driver, step: Driver, q4: Driver, q4Step: Driver;
beforeAll(async () => {
  await buildModel({ spec: TINY_QWEN2, dtypes: ["fp32", "q4"], outDir: dir, stepDtypes: ["fp32", "q4"] });
  main = await openDriver(dir, "model.onnx");
  step = await openDriver(dir, stepGraphFile("fp32"));
  q4 = await openDriver(dir, "model_q4.onnx");
  q4Step = await openDriver(dir, stepGraphFile("q4"));
});

/** A cache of `width` columns: `past`'s columns, then `spare` columns of noise that the mask hides. */
function withSpare(d: Driver, past: Past, spare: number): Past {
  const out: Past = {};
  for (let l = 0; l < d.layers; l++) {
    for (const kv of ["key", "value"]) {
      const t = past[`present.${l}.${kv}`]!;
      const [b, h, p, dim] = t.dims as number[];
      const data = new Float32Array(b! * h! * (p! + spare) * dim!);
      for (let i = 0; i < data.length; i++) data[i] = Math.sin(i) * 50;
      const src = t.data as Float32Array;
      for (let r = 0; r < b! * h!; r++) data.set(src.subarray(r * p! * dim!, (r + 1) * p! * dim!), r * (p! + spare) * dim!);
      out[`present.${l}.${kv}`] = new ort.Tensor("float32", data, [b!, h!, p! + spare, dim!]);
    }
  }
  return out;
}

/** One pass of the step graph over a main-graph cache: its logits and new columns (it has no presents). */
async function stepPass(d: Driver, ids: number[][], mask: number[][], past: Past) {
  const r = await forward(d, ids, mask, past, 1);
  return { logits: r.logits, columns: r.past };
}

const prompts = [
  [5, 300, 41, 1000, 77, 9, 640],
  [12, 800, 7],
];
const leftPadded = () => {
  const w = Math.max(...prompts.map((p) => p.length));
  return {
    ids: prompts.map((p) => [...new Array(w - p.length).fill(0), ...p]),
    mask: prompts.map((p) => [...new Array(w - p.length).fill(0), ...p.map(() => 1)]),
  };
};

type Pass = Awaited<ReturnType<typeof forward>>;

/**
 * Greedy decoding of the left-padded prompts on `whole` for `steps` steps; each step's pass also runs on `oneToken`
 * over the same cache, and `check` gets both results and the pass (its tokens, mask and cache).
 */
async function decodeBeside(
  whole: Driver,
  oneToken: Driver,
  steps: number,
  check: (want: Pass, got: Awaited<ReturnType<typeof stepPass>>, pass: { next: number[][]; mask: number[][]; past: Past }) => unknown,
): Promise<void> {
  const { ids, mask } = leftPadded();
  let past = (await forward(whole, ids, mask, null, 1)).past;
  let m = mask;
  let next = [[33], [901]];
  for (let i = 0; i < steps; i++) {
    m = m.map((row) => [...row, 1]);
    const want = await forward(whole, next, m, past, 1);
    const got = await stepPass(oneToken, next, m, past);
    await check(want, got, { next, mask: m, past });
    past = want.past;
    next = [0, 1].map((b) => [argmax(want.logits, b * whole.vocab, whole.vocab)]);
  }
}

describe("the one-token graph", () => {
  test("has no present outputs and the main graph's step outputs", () => {
    expect(existsSync(join(dir, "onnx", "model_step_q4.onnx"))).toBe(true);
    expect(step.session.outputNames.some((n) => n.startsWith("present."))).toBe(false);
    expect([...step.session.outputNames].sort()).toEqual(main.session.outputNames.filter((n) => !n.startsWith("present.")).sort());
    expect(step.session.inputNames).toEqual(main.session.inputNames);
  });

  test("fp32: decode steps of a left-padded batch equal the main graph's (1e-5), spare columns hidden", async () => {
    await decodeBeside(main, step, 6, async (want, got, pass) => {
      expect(maxAbsDiff(got.logits, want.logits)).toBeLessThan(1e-5);
      for (let l = 0; l < main.layers; l++) {
        for (const kv of ["key", "value"]) {
          const name = `step_key_values.${l}.${kv}`;
          expect(maxAbsDiff(got.columns[name]!.data as Float32Array, want.past[name]!.data as Float32Array)).toBeLessThan(1e-5);
        }
      }
      // The same pass over a cache with 5 spare columns of noise (masked): what an in-place cache feeds.
      const spare = withSpare(main, pass.past, 5);
      const padded = pass.mask.map((row) => [...row.slice(0, -1), 0, 0, 0, 0, 0, 1]);
      const overSpare = await stepPass(step, pass.next, padded, spare);
      expect(maxAbsDiff(overSpare.logits, want.logits)).toBeLessThan(1e-5);
    });
  });

  test("a pass of several new tokens a row is refused, not answered wrongly", async () => {
    const { ids, mask } = leftPadded();
    const past = (await forward(main, ids, mask, null, 1)).past;
    const more = [[3, 14, 15, 92], [65, 35, 89, 79]];
    const m = mask.map((row) => [...row, 1, 1, 1, 1]);
    await expect(forward(step, more, m, past, 0)).rejects.toThrow();
    // A prefill from nothing of one token a row is a one-token pass too: the same logits as the main graph's.
    const first = [[5], [12]];
    const want = await forward(main, first, [[1], [1]], null, 1);
    const got = await forward(step, first, [[1], [1]], null, 1);
    expect(maxAbsDiff(got.logits, want.logits)).toBeLessThan(1e-5);
  });

  test("q4 (the format it ships in): decode logits track the main q4 graph's and pick the same tokens", async () => {
    await decodeBeside(q4, q4Step, 8, (want, got) => {
      // Both quantize activations to int8 per 32-value block before each matmul (accuracy level 4); the attention's
      // float order differs, which can move one activation across a rounding edge: a small fraction of the logits' range.
      const range = Math.max(...want.logits) - Math.min(...want.logits);
      const diff = maxAbsDiff(got.logits, want.logits);
      expect(diff).toBeLessThan(0.02 * range);
      // The same token, unless the main graph's top two are within the difference (then either is the same pick).
      for (const b of [0, 1]) {
        const row = want.logits.subarray(b * q4.vocab, (b + 1) * q4.vocab);
        const pick = argmax(got.logits, b * q4.vocab, q4.vocab);
        expect(row[pick]!).toBeGreaterThanOrEqual(Math.max(...row) - 2 * diff);
      }
    });
  });
});
