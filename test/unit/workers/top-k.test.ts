import { describe, expect, test } from "bun:test";
import { TopK } from "../../../workers/text/top-k.ts";

const kept = (logits: Float32Array) => [...logits.keys()].filter((i) => logits[i]! > -Infinity);

describe("top-k", () => {
  test("keeps exactly the k highest logits", () => {
    const l = Float32Array.from([0.1, 5, -2, 3, 3.5, 9, 0]);
    new TopK().apply(l, 3);
    expect(kept(l)).toEqual([1, 4, 5]);
    expect(l[5]).toBe(9);
  });

  test("ties at the cut keep the lowest ids; k ≥ vocab or k < 1 changes nothing", () => {
    const l = Float32Array.from([1, 2, 2, 2, 0]);
    new TopK().apply(l, 2);
    expect(kept(l)).toEqual([1, 2]);
    const same = Float32Array.from([1, 2, 3]);
    new TopK().apply(same, 3);
    new TopK().apply(same, 0);
    expect([...same]).toEqual([1, 2, 3]);
  });

  test("matches a sort on random vocabularies, NaN and −∞ never kept", () => {
    const tk = new TopK();
    let s = 12345;
    const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 50; round++) {
      const n = 50 + Math.floor(rnd() * 500);
      const k = 1 + Math.floor(rnd() * 40);
      const l = Float32Array.from({ length: n }, () => (rnd() < 0.05 ? NaN : rnd() < 0.05 ? -Infinity : Math.round(rnd() * 100) / 10));
      const want = [...l.keys()].filter((i) => !Number.isNaN(l[i]!) && l[i]! > -Infinity).sort((a, b) => l[b]! - l[a]! || a - b).slice(0, k).sort((a, b) => a - b);
      tk.apply(l, k);
      expect(kept(l)).toEqual(want);
    }
  });
});
