// scheduler_config.json parsing: diffusers' defaults, the two Euler classes, and every refusal with its message.
import { describe, expect, test } from "bun:test";
import { parseSchedulerConfig } from "../../../../workers/image/scheduler-config.ts";

const TURBO = {
  _class_name: "EulerDiscreteScheduler",
  beta_schedule: "scaled_linear",
  beta_start: 0.00085,
  beta_end: 0.012,
  num_train_timesteps: 1000,
  prediction_type: "epsilon",
  timestep_spacing: "trailing",
  steps_offset: 1,
  interpolation_type: "linear",
  use_karras_sigmas: false,
  timestep_type: "discrete",
  trained_betas: null,
};

describe("parseSchedulerConfig", () => {
  test("an sd-turbo config", () => {
    expect(parseSchedulerConfig(TURBO)).toEqual({
      ancestral: false,
      betaSchedule: "scaled_linear",
      betaStart: 0.00085,
      betaEnd: 0.012,
      trainSteps: 1000,
      prediction: "epsilon",
      spacing: "trailing",
      stepsOffset: 1,
    });
  });

  test("Euler ancestral, and diffusers' defaults for missing keys", () => {
    expect(parseSchedulerConfig({ _class_name: "EulerAncestralDiscreteScheduler" })).toEqual({
      ancestral: true,
      betaSchedule: "linear",
      betaStart: 0.0001,
      betaEnd: 0.02,
      trainSteps: 1000,
      prediction: "epsilon",
      spacing: "linspace",
      stepsOffset: 0,
    });
  });

  test("v_prediction and sample predictions are run", () => {
    expect(parseSchedulerConfig({ ...TURBO, prediction_type: "v_prediction" }).prediction).toBe("v_prediction");
    expect(parseSchedulerConfig({ ...TURBO, prediction_type: "sample" }).prediction).toBe("sample");
  });

  const refusals: [string, Record<string, unknown>, string][] = [
    ["another scheduler class", { _class_name: "DPMSolverMultistepScheduler" }, "scheduler DPMSolverMultistepScheduler is not run by kiln"],
    ["karras sigmas", { use_karras_sigmas: true }, "use_karras_sigmas is not run by kiln"],
    ["exponential sigmas", { use_exponential_sigmas: true }, "use_exponential_sigmas is not run by kiln"],
    ["beta sigmas", { use_beta_sigmas: true }, "use_beta_sigmas is not run by kiln"],
    ["zero-SNR rescaling", { rescale_betas_zero_snr: true }, "rescale_betas_zero_snr is not run by kiln"],
    ["continuous timesteps", { timestep_type: "continuous" }, 'timestep_type "continuous" is not run by kiln'],
    ["log-linear interpolation", { interpolation_type: "log_linear" }, 'interpolation_type "log_linear" is not run by kiln'],
    ["trained betas", { trained_betas: [0.1, 0.2] }, "trained_betas is not run by kiln"],
    ["a sigma_min final sigma", { final_sigmas_type: "sigma_min" }, 'final_sigmas_type "sigma_min" is not run by kiln'],
    ["a cosine beta schedule", { beta_schedule: "squaredcos_cap_v2" }, 'beta_schedule "squaredcos_cap_v2" is not run by kiln'],
    ["an unknown prediction type", { prediction_type: "flow" }, 'prediction_type "flow" is not run by kiln'],
    ["an unknown spacing", { timestep_spacing: "karras" }, 'timestep_spacing "karras" is not run by kiln'],
    ["a non-numeric beta", { beta_start: "0.1" }, 'beta_start "0.1" is not valid'],
    ["a fractional steps_offset", { steps_offset: 0.5 }, "steps_offset 0.5 is not valid"],
    ["too few training steps", { num_train_timesteps: 1 }, "num_train_timesteps 1 is not valid"],
    ["beta_end below beta_start", { beta_start: 0.02, beta_end: 0.01 }, "beta_end is below beta_start"],
  ];
  for (const [what, change, message] of refusals) {
    test(`refuses ${what}`, () => {
      expect(() => parseSchedulerConfig({ ...TURBO, ...change })).toThrow(message);
    });
  }

  test("false flags and a null trained_betas are fine", () => {
    expect(() => parseSchedulerConfig({ ...TURBO, use_karras_sigmas: false, use_beta_sigmas: false, rescale_betas_zero_snr: false })).not.toThrow();
  });
});
