// Parses scheduler/scheduler_config.json into what kiln's Euler samplers run, refusing (by name) every setting that
// would make diffusers sample differently from them.
import type { BetaSchedule, Prediction, SchedulerSpec, Spacing } from "./schedule.ts";

const CLASSES: Record<string, boolean> = { EulerDiscreteScheduler: false, EulerAncestralDiscreteScheduler: true };
const BETA_SCHEDULES: BetaSchedule[] = ["scaled_linear", "linear"];
const PREDICTIONS: Prediction[] = ["epsilon", "v_prediction", "sample"];
const SPACINGS: Spacing[] = ["linspace", "leading", "trailing"];
/** Flags that, when true, replace the sigmas kiln computes. */
const SIGMA_FLAGS = ["use_karras_sigmas", "use_exponential_sigmas", "use_beta_sigmas", "rescale_betas_zero_snr"];

function pick<T extends string>(config: Record<string, unknown>, key: string, allowed: T[], fallback: T): T {
  const v = config[key] ?? fallback;
  if (!allowed.includes(v as T)) throw new Error(`scheduler_config.json: ${key} "${String(v)}" is not run by kiln (it runs ${allowed.join(", ")})`);
  return v as T;
}

function num(config: Record<string, unknown>, key: string, fallback: number, ok: (v: number) => boolean): number {
  const v = config[key] ?? fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || !ok(v)) throw new Error(`scheduler_config.json: ${key} ${JSON.stringify(v)} is not valid`);
  return v;
}

/** Defaults are diffusers' constructor defaults, so a config that omits a key means what it means there. */
export function parseSchedulerConfig(config: Record<string, unknown>): SchedulerSpec {
  const name = String(config._class_name);
  if (!(name in CLASSES)) throw new Error(`scheduler ${name} is not run by kiln (it runs ${Object.keys(CLASSES).join(", ")})`);
  for (const flag of SIGMA_FLAGS) if (config[flag] === true) throw new Error(`scheduler_config.json: ${flag} is not run by kiln`);
  if (config.timestep_type === "continuous") throw new Error('scheduler_config.json: timestep_type "continuous" is not run by kiln');
  const interpolation = config.interpolation_type ?? "linear";
  if (interpolation !== "linear") throw new Error(`scheduler_config.json: interpolation_type "${String(interpolation)}" is not run by kiln (it runs linear)`);
  if (config.trained_betas !== undefined && config.trained_betas !== null) throw new Error("scheduler_config.json: trained_betas is not run by kiln");
  const finalSigmas = config.final_sigmas_type ?? "zero";
  if (finalSigmas !== "zero") throw new Error(`scheduler_config.json: final_sigmas_type "${String(finalSigmas)}" is not run by kiln (it runs zero)`);
  const spec: SchedulerSpec = {
    ancestral: CLASSES[name]!,
    betaSchedule: pick(config, "beta_schedule", BETA_SCHEDULES, "linear"),
    betaStart: num(config, "beta_start", 0.0001, (v) => v > 0 && v < 1),
    betaEnd: num(config, "beta_end", 0.02, (v) => v > 0 && v < 1),
    trainSteps: num(config, "num_train_timesteps", 1000, (v) => Number.isInteger(v) && v >= 2),
    prediction: pick(config, "prediction_type", PREDICTIONS, "epsilon"),
    spacing: pick(config, "timestep_spacing", SPACINGS, "linspace"),
    stepsOffset: num(config, "steps_offset", 0, (v) => Number.isInteger(v) && v >= 0),
  };
  if (spec.betaEnd < spec.betaStart) throw new Error("scheduler_config.json: beta_end is below beta_start");
  return spec;
}
