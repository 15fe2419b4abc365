// Specs (presets, validation, hash) and the seeded weight generator.
import { describe, expect, test } from "bun:test";
import { DEFAULT_MODEL_ID, PRESETS, specHash, validateSpec } from "../../../src/modelgen/index.ts";
import { canonicalJson } from "../../../src/modelgen/spec.ts";
import { hashName, Rng, tensorRng } from "../../../src/modelgen/rng.ts";
import { weightPlan } from "../../../src/modelgen/weights.ts";

describe("presets and specs", () => {
  test("the tiny preset is the default model; the 0.5B preset has Qwen2-0.5B's shape", () => {
    expect(PRESETS.tiny!.id).toBe(DEFAULT_MODEL_ID);
    expect(PRESETS["qwen2-0.5b"]).toMatchObject({ hidden: 896, layers: 24, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, vocab: 151936, contextLength: 32768, tiedEmbeddings: true });
    for (const s of Object.values(PRESETS)) expect(() => validateSpec(s)).not.toThrow();
  });

  test("parameter count of the 0.5B preset matches Qwen2-0.5B (≈494M)", () => {
    const params = weightPlan(PRESETS["qwen2-0.5b"]!).reduce((s, e) => s + e.rows * e.cols, 0);
    expect(params).toBe(494032768);
  });

  test("validation rejects impossible shapes", () => {
    const t = PRESETS.tiny!;
    expect(() => validateSpec({ ...t, headDim: 31 })).toThrow("even");
    expect(() => validateSpec({ ...t, layers: 0 })).toThrow("spec.layers");
    expect(() => validateSpec({ ...t, id: "Tiny Model" })).toThrow("lowercase");
    expect(() => validateSpec({ ...t, vocab: 300 })).toThrow("vocab");
  });

  test("specHash ignores key order but not values, dtypes or the default dtype", () => {
    const t = PRESETS.tiny!;
    const reordered = Object.fromEntries(Object.entries(t).reverse()) as typeof t;
    expect(specHash(reordered, ["fp32"])).toBe(specHash(t, ["fp32"]));
    expect(specHash({ ...t, seed: 2 }, ["fp32"])).not.toBe(specHash(t, ["fp32"]));
    expect(specHash(t, ["fp32", "q4"])).not.toBe(specHash(t, ["fp32"]));
    expect(specHash(t, ["fp32", "q4"], "q4")).not.toBe(specHash(t, ["fp32", "q4"]));
    expect(canonicalJson({ b: 1, a: [2, { d: null, c: "x" }] })).toBe('{"a":[2,{"c":"x","d":null}],"b":1}');
  });
});

describe("rng", () => {
  test("streams are reproducible and distinct per seed and tensor name", () => {
    const draw = (r: Rng) => Array.from({ length: 5 }, () => r.nextU32());
    expect(draw(new Rng(1))).toEqual(draw(new Rng(1)));
    expect(draw(new Rng(1))).not.toEqual(draw(new Rng(2)));
    expect(draw(tensorRng(1, "a.weight"))).not.toEqual(draw(tensorRng(1, "b.weight")));
    expect(hashName("a")).not.toBe(hashName("b"));
    expect(draw(new Rng(0)).some((x) => x !== 0)).toBe(true);
  });

  test("fillNormal has the requested mean and std, and chunking does not change the values", () => {
    const all = new Float32Array(200_000);
    new Rng(5).fillNormal(all, 0.02);
    let sum = 0, sq = 0;
    for (const v of all) (sum += v), (sq += v * v);
    const mean = sum / all.length;
    expect(Math.abs(mean)).toBeLessThan(0.0005);
    expect(Math.sqrt(sq / all.length - mean * mean)).toBeCloseTo(0.02, 3);
    const r = new Rng(5);
    const a = new Float32Array(70_000), b = new Float32Array(130_000);
    r.fillNormal(a, 0.02);
    r.fillNormal(b, 0.02);
    expect(a).toEqual(all.subarray(0, 70_000));
    expect(b).toEqual(all.subarray(70_000));
  });
});
