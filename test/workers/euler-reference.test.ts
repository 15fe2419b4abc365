// The sampler against an independent reference (fixtures/euler_reference.py → euler-reference.json): latents before
// and after every step for an analytic UNet graph (this test's own, and the model builder's), on int64 and float32
// timestep inputs, within 1e-4; and the gaussian generator draw for draw.
import { describe, expect, test } from "bun:test";
import * as ort from "onnxruntime-node";
import { analyticUnetGraph } from "../../src/modelgen/index.ts";
import { gaussianFill } from "../../workers/image/gaussian.ts";
import type { GraphSession } from "../../workers/image/graph-io.ts";
import { sampleLatents } from "../../workers/image/sampler.ts";
import { buildSchedule, type SchedulerSpec } from "../../workers/image/schedule.ts";
import { createRng } from "../../workers/text/prng.ts";
import reference from "./fixtures/euler-reference.json";
import { unetGraph } from "./toy-diffusion.ts";

interface Case {
  name: string;
  scheduler: "euler" | "euler_ancestral";
  beta_schedule: SchedulerSpec["betaSchedule"];
  beta_start: number;
  beta_end: number;
  num_train_timesteps: number;
  timestep_spacing: SchedulerSpec["spacing"];
  steps_offset: number;
  prediction_type: SchedulerSpec["prediction"];
  timestep_type: "int64" | "float32";
  steps: number;
  seed: number;
  guidance: number;
  cond: number;
  uncond: number | null;
  strength: number | null;
  init: number[] | null;
  mask: number[] | null;
  shape: [number, number, number];
  timesteps: number[];
  sigmas: number[];
  start_index: number;
  init_noise_sigma: number;
  latents: number[][];
}

const cases = reference.cases as unknown as Case[];
const sessions = new Map<string, Promise<GraphSession>>();
type Source = "test" | "builder";

/** The analytic UNet the reference evaluates, as an ONNX graph with the given timestep input type. */
function unet(type: "int64" | "float32", source: Source): Promise<GraphSession> {
  const key = `${source}:${type}`;
  let s = sessions.get(key);
  if (!s) {
    const graph = source === "test" ? unetGraph({ timestep: type, hidden: 4 }) : analyticUnetGraph(type, 4);
    s = ort.InferenceSession.create(graph) as unknown as Promise<GraphSession>;
    sessions.set(key, s);
  }
  return s;
}

const specOf = (c: Case): SchedulerSpec => ({
  ancestral: c.scheduler === "euler_ancestral",
  betaSchedule: c.beta_schedule,
  betaStart: c.beta_start,
  betaEnd: c.beta_end,
  trainSteps: c.num_train_timesteps,
  prediction: c.prediction_type,
  spacing: c.timestep_spacing,
  stepsOffset: c.steps_offset,
});

/** An embedding whose mean is `m` (the reference's m_row): 3 tokens × 4 features. */
const embedding = (m: number) => ({ data: new Float32Array(12).fill(m), seqLen: 3, hidden: 4 });

/** Timestep types a case can run on: its own, and the other when its timesteps are whole (truncation changes nothing). */
const typesFor = (c: Case): ("int64" | "float32")[] =>
  c.timesteps.every(Number.isInteger) ? ["int64", "float32"] : [c.timestep_type];

describe("generator", () => {
  test("uniforms and gaussians of seed 7 match the reference draw for draw", () => {
    const rng = createRng(reference.generator.seed);
    expect(Array.from({ length: 8 }, rng)).toEqual(reference.generator.uniform);
    expect(Array.from(gaussianFill(createRng(reference.generator.seed), 8))).toEqual(reference.generator.gaussian);
  });
});

describe("schedule", () => {
  for (const c of cases) {
    test(`${c.name}: timesteps, sigmas and init sigma`, () => {
      const s = buildSchedule(specOf(c), c.steps);
      expect(s.timesteps).toEqual(c.timesteps);
      s.sigmas.forEach((v, i) => expect(v).toBeCloseTo(c.sigmas[i]!, 12));
      expect(s.initNoiseSigma).toBeCloseTo(c.init_noise_sigma, 12);
    });
  }
});

describe("sampler against the reference", () => {
  for (const c of cases) {
    for (const [type, source] of typesFor(c).flatMap((t) => (["test", "builder"] as const).map((s) => [t, s] as const))) {
      test(`${c.name} on a ${type} timestep input (${source}'s graph)`, async () => {
        const [channels, height, width] = c.shape;
        const got = await sampleLatents({
          unet: await unet(type, source),
          scheduler: specOf(c),
          shape: { channels, height, width },
          cond: embedding(c.cond),
          ...(c.uncond !== null ? { uncond: embedding(c.uncond) } : {}),
          guidance: c.guidance,
          seed: c.seed,
          steps: c.steps,
          ...(c.init ? { init: { latents: Float32Array.from(c.init), strength: c.strength!, ...(c.mask ? { mask: Float32Array.from(c.mask) } : {}) } } : {}),
        });
        expect(got.length).toBe(c.latents.length);
        let worst = 0;
        got.forEach((row, step) => row.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - c.latents[step]![i]!)))));
        expect(worst).toBeLessThan(1e-4);
      });
    }
  }
});
