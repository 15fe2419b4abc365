import { describe, expect, test } from "bun:test";
import { createRng } from "../../../workers/text/prng.ts";
import { argmax, Sampler } from "../../../workers/text/sampler.ts";

const logitsOf = (probs: number[]) => Float32Array.from(probs.map(Math.log));
const fixed = (u: number) => () => u;

/** Brute force: the tokens of the nucleus in descending order of probability. */
function referenceNucleus(logits: Float32Array, temperature: number, topP: number): number[] {
  const max = logits.reduce((a, b) => Math.max(a, b), -Infinity);
  const w = Array.from(logits, (l) => Math.exp((l - max) / temperature));
  const total = w.reduce((a, b) => a + b, 0);
  const order = w.map((_, i) => i).sort((a, b) => w[b]! - w[a]! || a - b);
  const kept: number[] = [];
  let mass = 0;
  for (const i of order) {
    kept.push(i);
    mass += w[i]!;
    if (mass >= topP * total) break;
  }
  return kept;
}

describe("argmax", () => {
  test("finds the largest, the first on ties, and skips NaN", () => {
    expect(argmax(Float32Array.of(1, 5, 3))).toBe(1);
    expect(argmax(Float32Array.of(2, 7, 7))).toBe(1);
    expect(argmax(Float32Array.of(NaN, -1, NaN))).toBe(1);
  });

  test("rejects rows with no finite value", () => {
    expect(() => argmax(Float32Array.of(NaN, -Infinity))).toThrow("no finite");
  });
});

describe("Sampler", () => {
  const sampler = new Sampler();

  test("temperature 0 is greedy whatever the rng says", () => {
    const l = Float32Array.of(0.1, 2, 1.9);
    expect(sampler.sample(l, { temperature: 0, topP: 0.5 }, fixed(0.99))).toBe(1);
  });

  test("the nucleus keeps the fewest top tokens reaching top_p", () => {
    const l = logitsOf([0.5, 0.3, 0.15, 0.05]);
    // u near 1 picks the least likely member of the nucleus.
    expect(sampler.sample(l, { temperature: 1, topP: 0.8 }, fixed(0.999999))).toBe(1);
    expect(sampler.sample(l, { temperature: 1, topP: 0.81 }, fixed(0.999999))).toBe(2);
    expect(sampler.sample(l, { temperature: 1, topP: 1 }, fixed(0.999999))).toBe(3);
    expect(sampler.sample(l, { temperature: 1, topP: 0.1 }, fixed(0.999999))).toBe(0);
  });

  test("draws follow the renormalised nucleus probabilities", () => {
    const l = logitsOf([0.5, 0.3, 0.15, 0.05]);
    // Within the 0.8 nucleus token 0 has 0.5/0.8 = 0.625 of the mass.
    expect(sampler.sample(l, { temperature: 1, topP: 0.8 }, fixed(0.62))).toBe(0);
    expect(sampler.sample(l, { temperature: 1, topP: 0.8 }, fixed(0.63))).toBe(1);
    // Without the filter token 2 spans (0.8, 0.95].
    expect(sampler.sample(l, { temperature: 1, topP: 1 }, fixed(0.9))).toBe(2);
  });

  test("temperature sharpens and flattens", () => {
    const l = logitsOf([0.6, 0.4]);
    // At T = 0.5 probabilities become 0.36/0.52 ≈ 0.692 and 0.308.
    expect(sampler.sample(l, { temperature: 0.5, topP: 1 }, fixed(0.69))).toBe(0);
    expect(sampler.sample(l, { temperature: 0.5, topP: 1 }, fixed(0.70))).toBe(1);
    // At T = 2 they become ≈ 0.5505 and 0.4495.
    expect(sampler.sample(l, { temperature: 2, topP: 1 }, fixed(0.55))).toBe(0);
    expect(sampler.sample(l, { temperature: 2, topP: 1 }, fixed(0.551))).toBe(1);
  });

  test("never picks NaN or -Infinity logits", () => {
    const l = Float32Array.of(NaN, 0, -Infinity, 0);
    for (const u of [0, 0.3, 0.7, 0.9999]) expect([1, 3]).toContain(sampler.sample(l, { temperature: 1, topP: 1 }, fixed(u)));
  });

  test("matches a brute-force nucleus on a 151936-token vocabulary", () => {
    const rng = createRng(3);
    const vocab = 151936;
    const l = new Float32Array(vocab);
    for (let i = 0; i < vocab; i++) l[i] = (rng() - 0.5) * 8 + (i % 997 === 0 ? 6 : 0);
    for (const [temperature, topP] of [[0.7, 0.9], [1, 0.5], [3, 0.95], [0.2, 0.99]] as const) {
      const expected = referenceNucleus(l, temperature, topP);
      const got = sampler.nucleus(l, { temperature, topP });
      expect(got.length).toBe(expected.length);
      expect(new Set(got)).toEqual(new Set(expected));
      const inside = new Set(expected);
      const draw = createRng(11);
      for (let k = 0; k < 20; k++) expect(inside.has(sampler.sample(l, { temperature, topP }, draw))).toBe(true);
    }
  });

  test("a peaked distribution's nucleus is its top few tokens", () => {
    const l = new Float32Array(5000).fill(-10);
    l[42] = 5;
    l[7] = 4;
    l[4999] = 4;
    // Weights 1, e^-1, e^-1 and 4997 × e^-15: 0.9 of the mass needs token 42 and both runners-up.
    expect(sampler.nucleus(l, { temperature: 1, topP: 0.9 })).toEqual([42, 7, 4999]);
    expect(sampler.nucleus(l, { temperature: 1, topP: 0.5 })).toEqual([42]);
  });

  test("a flat distribution keeps exactly the needed count", () => {
    const l = new Float32Array(1000);
    // 1000 equal tokens: top_p 0.25 needs exactly 250 of them (the lowest ids on ties).
    expect(sampler.sample(l, { temperature: 1, topP: 0.25 }, fixed(0.99999))).toBe(249);
  });

  test("the same seed samples the same tokens", () => {
    const l = logitsOf([0.2, 0.2, 0.2, 0.2, 0.2]);
    const run = (seed: number) => {
      const rng = createRng(seed);
      return Array.from({ length: 30 }, () => sampler.sample(l, { temperature: 1, topP: 0.9 }, rng));
    };
    expect(run(9)).toEqual(run(9));
    expect(run(9)).not.toEqual(run(10));
  });
});
