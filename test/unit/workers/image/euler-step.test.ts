// Euler and Euler-ancestral steps, guidance, prediction types and the inpainting blend, against closed forms.
import { describe, expect, test } from "bun:test";
import { ancestralSigmas, blendMask, eulerUpdate, guide, modelInput, predictOriginal } from "../../../../workers/image/euler-step.ts";

describe("guidance", () => {
  test("ε_u + g·(ε_c − ε_u)", () => {
    expect(Array.from(guide([1, 0, -2], [3, 1, -2], 7.5))).toEqual([16, 7.5, -2]);
    expect(Array.from(guide([1, 2], [3, 5], 1))).toEqual([3, 5]);
  });
});

describe("predictOriginal", () => {
  test("epsilon: x − σε", () => expect(predictOriginal(2, 0.5, 3, "epsilon")).toBe(0.5));
  test("v_prediction: ε·(−σ/√(σ²+1)) + x/(σ²+1)", () => {
    const s = 3;
    expect(predictOriginal(2, 0.5, s, "v_prediction")).toBeCloseTo(0.5 * (-s / Math.sqrt(10)) + 2 / 10, 14);
  });
  test("sample: the output itself", () => expect(predictOriginal(2, 0.5, 3, "sample")).toBe(0.5));
});

describe("steps", () => {
  test("model input is x/√(σ² + 1)", () => {
    expect(Array.from(modelInput(Float32Array.of(2, -4), Math.sqrt(3)))).toEqual([1, -2]);
  });

  test("Euler epsilon: x + ε·(σ' − σ)", () => {
    const x = Float32Array.of(1, -2, 0.5);
    const eps = [0.25, 1, -1];
    const out = eulerUpdate(x, eps, 4, 1, "epsilon");
    // (x − x0)/σ = ε, so x' = x + ε(σ' − σ)
    expect(Array.from(out)).toEqual([1 - 0.75, -2 - 3, 0.5 + 3]);
  });

  test("Euler to σ' = 0 with epsilon lands on x0", () => {
    const out = eulerUpdate(Float32Array.of(3), [0.5], 2, 0, "epsilon");
    expect(out[0]).toBe(2);
  });

  test("Euler sample prediction moves toward the predicted sample", () => {
    // d = (x − x0)/σ = (3 − 1)/2 = 1; x' = 3 + 1·(0.5 − 2)
    expect(eulerUpdate(Float32Array.of(3), [1], 2, 0.5, "sample")[0]).toBe(1.5);
  });

  test("ancestral sigmas: σ_up² + σ_down² = σ'², and the last step has no noise", () => {
    const { up, down } = ancestralSigmas(4, 2);
    expect(up * up + down * down).toBeCloseTo(4, 12);
    expect(up).toBeCloseTo(Math.sqrt((4 * (16 - 4)) / 16), 12);
    expect(ancestralSigmas(4, 0)).toEqual({ up: 0, down: 0 });
  });

  test("ancestral: x + d·(σ_down − σ) + z·σ_up", () => {
    const { up, down } = ancestralSigmas(4, 2);
    const out = eulerUpdate(Float32Array.of(1), [0.5], 4, 2, "epsilon", [2]);
    expect(out[0]).toBeCloseTo(1 + 0.5 * (down - 4) + 2 * up, 6);
  });

  test("results are float32", () => {
    const out = eulerUpdate(Float32Array.of(0.1), [0.3], 1.7, 0.9, "v_prediction");
    expect(out).toBeInstanceOf(Float32Array);
  });
});

describe("blendMask", () => {
  test("mask 0 resets to init + noise·σ, 1 keeps the step, shared across channels", () => {
    // 2 channels × 2 cells
    const x = Float32Array.of(10, 20, 30, 40);
    blendMask(x, Float32Array.of(1, 2, 3, 4), [1, 1, 1, 1], 0.5, Float32Array.of(0, 1), 2);
    expect(Array.from(x)).toEqual([1.5, 20, 3.5, 40]);
  });

  test("at σ = 0 the unmasked cells are the init latents exactly; fractions mix", () => {
    const x = Float32Array.of(10, 20);
    blendMask(x, Float32Array.of(1, 2), [7, 7], 0, Float32Array.of(0, 0.25), 2);
    expect(Array.from(x)).toEqual([1, 0.75 * 2 + 0.25 * 20]);
  });
});
