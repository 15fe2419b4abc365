// Penalties, logit bias and min-p: what each does to a row's distribution, alone and through the row sampler.
import { describe, expect, test } from "bun:test";
import type { SamplingParams } from "../../../src/protocol/text.ts";
import { applyMinP, LogitAdjuster } from "../../../workers/text/logit-adjust.ts";
import { RowSampler } from "../../../workers/text/row-sampler.ts";
import { Sequence } from "../../../workers/text/sequence.ts";

const base: SamplingParams = { maxTokens: 8, temperature: 0, topP: 1, seed: 1, stop: [], stopTokenIds: [] };
const softmax = (l: Float32Array) => {
  const m = Math.max(...l);
  const e = [...l].map((v) => Math.exp(v - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
};
const kept = (l: Float32Array) => [...l.keys()].filter((i) => l[i]! > -Infinity);

describe("LogitAdjuster", () => {
  test("nothing asked, nothing built: rows without samplers pay nothing", () => {
    expect(LogitAdjuster.for(base, [1, 2])).toBeNull();
    expect(LogitAdjuster.for({ ...base, presencePenalty: 0, frequencyPenalty: 0, repetitionPenalty: 1, logitBias: [] }, [1])).toBeNull();
  });

  test("presence subtracts once per generated token, frequency once per occurrence; the prompt does not count", () => {
    const a = LogitAdjuster.for({ ...base, presencePenalty: 0.5, frequencyPenalty: 0.25 }, [3])!;
    for (const t of [1, 1, 1, 2]) a.record(t);
    const l = Float32Array.from([0, 4, 4, 4]);
    a.apply(l);
    expect([...l]).toEqual([0, 4 - 0.5 - 0.75, 4 - 0.5 - 0.25, 4]);
    const p = softmax(l);
    // The token repeated three times lost the most probability; the untouched prompt token now leads.
    expect(p[3]! > p[2]! && p[2]! > p[1]!).toBe(true);
  });

  test("the repetition penalty divides positive logits and multiplies negative ones, over prompt and output", () => {
    const a = LogitAdjuster.for({ ...base, repetitionPenalty: 2 }, [0, 1])!;
    a.record(2);
    const l = Float32Array.from([3, -1, 2, 1]);
    a.apply(l);
    expect([...l]).toEqual([1.5, -2, 1, 1]);
  });

  test("a bias of +100 makes its token all but certain, -100 all but impossible", () => {
    const a = LogitAdjuster.for({ ...base, logitBias: [[2, 100], [0, -100]] }, [])!;
    const l = Float32Array.from([5, 1, 0, 1]);
    a.apply(l);
    const p = softmax(l);
    expect(p[2]!).toBeGreaterThan(0.999999);
    expect(p[0]!).toBeLessThan(1e-40);
  });
});

describe("min-p", () => {
  test("keeps exactly the tokens at least min_p times as likely as the top one, at the request's temperature", () => {
    const l = Float32Array.from([2, 2 + Math.log(0.5), 2 + Math.log(0.3), 2 + Math.log(0.05)]);
    const cold = Float32Array.from(l);
    applyMinP(l, 0.25, 1);
    expect(kept(l)).toEqual([0, 1, 2]);
    // At T = 0.5 the ratios square: 0.25, 0.09, 0.0025 — only the first two stay.
    applyMinP(cold, 0.2, 0.5);
    expect(kept(cold)).toEqual([0, 1]);
  });

  test("0, or greedy decoding, changes nothing", () => {
    const l = Float32Array.from([1, 0, -3]);
    applyMinP(l, 0, 1);
    applyMinP(l, 0.9, 0);
    expect([...l]).toEqual([1, 0, -3]);
  });
});

describe("through the row sampler", () => {
  const bytes = (id: number) => new TextEncoder().encode(String.fromCharCode(97 + id));
  const run = (params: SamplingParams, logits: number[], steps: number) => {
    const seq = new Sequence("s", [0], params, bytes);
    const sampler = new RowSampler(1024, bytes);
    let text = "";
    for (let i = 0; i < steps; i++) text += sampler.next(seq, Float32Array.from(logits)).text;
    return text;
  };

  test("greedy repeats its top token; a presence penalty makes it move on, a logit bias picks another", () => {
    const logits = [0, 3, 2.5, 2.2];
    expect(run(base, logits, 4)).toBe("bbbb");
    expect(run({ ...base, presencePenalty: 1 }, logits, 3)).toBe("bcd");
    expect(run({ ...base, logitBias: [[3, 5]] }, logits, 2)).toBe("dd");
  });

  test("min-p 1 at temperature 1 leaves only the top token: every seed draws it", () => {
    const logits = [0, 1, 0.9, 0.8];
    const draws = new Set(Array.from({ length: 20 }, (_, seed) => run({ ...base, temperature: 1, seed, minP: 1 }, logits, 1)));
    expect([...draws]).toEqual(["b"]);
    const free = new Set(Array.from({ length: 40 }, (_, seed) => run({ ...base, temperature: 1, seed }, logits, 1)));
    expect(free.size).toBeGreaterThan(1);
  });
});
