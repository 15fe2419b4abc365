// One image's denoising state: where it starts (text-to-image, edit), the noise stream's order, guidance rows and
// the mask's reset of unmasked cells, with a hand-written model output instead of a UNet.
import { describe, expect, test } from "bun:test";
import { createRng } from "../../../../workers/text/prng.ts";
import { Denoiser, type DenoiseSetup } from "../../../../workers/image/denoiser.ts";
import { eulerUpdate, guide } from "../../../../workers/image/euler-step.ts";
import { gaussianFill } from "../../../../workers/image/gaussian.ts";
import { buildSchedule, type SchedulerSpec } from "../../../../workers/image/schedule.ts";

const SPEC: SchedulerSpec = { ancestral: false, betaSchedule: "scaled_linear", betaStart: 0.00085, betaEnd: 0.012, trainSteps: 1000, prediction: "epsilon", spacing: "trailing", stepsOffset: 0 };
const SHAPE = { channels: 2, height: 2, width: 3 };
const SIZE = 12;

function setup(over: Partial<DenoiseSetup> = {}, steps = 4): DenoiseSetup {
  const spec = over.spec ?? SPEC;
  return { spec, schedule: buildSchedule(spec, steps), shape: SHAPE, seed: 7, guidance: 1, ...over };
}

const f32 = (values: ArrayLike<number>) => Float32Array.from(values);
const ramp = (k: number) => Float32Array.from({ length: SIZE }, (_, i) => Math.sin(i * k));

describe("Denoiser", () => {
  test("text-to-image starts at ε₀·init sigma and runs every step", () => {
    const s = setup();
    const d = new Denoiser(s);
    expect(d.latents).toEqual(f32(gaussianFill(createRng(7), SIZE).map((v) => v * s.schedule.initNoiseSigma)));
    expect([d.index, d.timestep, d.rows, d.done]).toEqual([0, 999, 1, false]);
    for (let i = 0; i < 4; i++) d.advance(ramp(1));
    expect(d.done).toBe(true);
    expect(() => d.advance(ramp(1))).toThrow("already finished");
  });

  test("a plain Euler step matches eulerUpdate on the scaled input's output", () => {
    const s = setup();
    const d = new Denoiser(s);
    const x = d.latents;
    const input = d.modelInput();
    expect(input).toBe(d.modelInput());
    expect(input[0]).toBeCloseTo(x[0]! / Math.sqrt(s.schedule.sigmas[0]! ** 2 + 1), 6);
    d.advance(ramp(1));
    expect(d.latents).toEqual(eulerUpdate(x, ramp(1), s.schedule.sigmas[0]!, s.schedule.sigmas[1]!, "epsilon"));
    expect(d.modelInput()).not.toBe(input);
  });

  test("guidance takes two rows and combines them", () => {
    const s = setup({ guidance: 3 });
    const d = new Denoiser(s);
    const x = d.latents;
    expect(d.rows).toBe(2);
    expect(() => d.advance(ramp(1))).toThrow("unconditional");
    d.advance(ramp(1), ramp(2));
    expect(d.latents).toEqual(eulerUpdate(x, guide(ramp(2), ramp(1), 3), s.schedule.sigmas[0]!, s.schedule.sigmas[1]!, "epsilon"));
  });

  test("ancestral steps draw a fresh tensor after ε₀, one per step", () => {
    const spec = { ...SPEC, ancestral: true };
    const s = setup({ spec }, 2);
    const d = new Denoiser(s);
    const rng = createRng(7);
    gaussianFill(rng, SIZE);
    const z1 = gaussianFill(rng, SIZE);
    const z2 = gaussianFill(rng, SIZE);
    const x0 = d.latents;
    d.advance(ramp(1));
    const x1 = eulerUpdate(x0, ramp(1), s.schedule.sigmas[0]!, s.schedule.sigmas[1]!, "epsilon", z1);
    expect(d.latents).toEqual(x1);
    d.advance(ramp(3));
    expect(d.latents).toEqual(eulerUpdate(x1, ramp(3), s.schedule.sigmas[1]!, 0, "epsilon", z2));
  });

  test("an edit starts at init + ε₀·σ[t_start] and runs only the last steps", () => {
    const init = ramp(0.5);
    const s = setup({ init: { latents: init, strength: 0.5 } });
    const d = new Denoiser(s);
    const eps = gaussianFill(createRng(7), SIZE);
    expect([d.startIndex, d.index, d.timestep]).toEqual([2, 2, 499]);
    expect(d.latents).toEqual(f32(Array.from(init, (v, i) => v + eps[i]! * s.schedule.sigmas[2]!)));
    d.advance(ramp(1));
    d.advance(ramp(1));
    expect(d.done).toBe(true);
  });

  test("with a mask, unmasked cells follow init + ε₀·σ' and end at the init latents exactly", () => {
    const init = ramp(0.5);
    // cells 0 and 4 of the 2×3 plane may change
    const mask = Float32Array.of(1, 0, 0, 0, 1, 0);
    const s = setup({ init: { latents: init, strength: 1, mask } });
    const d = new Denoiser(s);
    const eps = gaussianFill(createRng(7), SIZE);
    d.advance(ramp(1));
    expect(d.latents[1]).toBe(Math.fround(init[1]! + eps[1]! * s.schedule.sigmas[1]!));
    while (!d.done) d.advance(ramp(2));
    for (let i = 0; i < SIZE; i++) {
      if (mask[i % 6] === 0) expect(d.latents[i]).toBe(init[i]!);
      else expect(d.latents[i]).not.toBe(init[i]!);
    }
  });

  test("a masked edit at full strength starts from noise alone (inpainting), an unmasked one from init + ε₀·σ_max", () => {
    const mask = f32([1, 0, 1, 0, 1, 0]);
    const noise = gaussianFill(createRng(7), SIZE);
    const masked = new Denoiser(setup({ init: { latents: ramp(2), strength: 1, mask } }));
    const s = setup();
    expect(masked.latents).toEqual(f32(noise.map((v) => v * s.schedule.initNoiseSigma)));
    expect(masked.index).toBe(0);
    const plain = new Denoiser(setup({ init: { latents: ramp(2), strength: 1 } }));
    expect(plain.latents).toEqual(f32(noise.map((v, i) => ramp(2)[i]! + v * s.schedule.sigmas[0]!)));
  });

  test("refuses init latents or a mask of the wrong size", () => {
    expect(() => new Denoiser(setup({ init: { latents: new Float32Array(5), strength: 1 } }))).toThrow("init latents have 5 values");
    expect(() => new Denoiser(setup({ init: { latents: new Float32Array(SIZE), strength: 1, mask: new Float32Array(5) } }))).toThrow("mask has 5 values");
  });
});
