// The noise schedule of diffusers' Euler schedulers: training sigmas, the timesteps of an S-step run per spacing,
// their interpolated sigmas, the initial noise scale, and where an edit starts. Float64 throughout.

export type BetaSchedule = "scaled_linear" | "linear";
export type Spacing = "linspace" | "leading" | "trailing";
export type Prediction = "epsilon" | "v_prediction" | "sample";

/** What scheduler_config.json says, reduced to what the Euler samplers run. */
export interface SchedulerSpec {
  /** EulerAncestralDiscreteScheduler (fresh noise each step) rather than EulerDiscreteScheduler. */
  ancestral: boolean;
  betaSchedule: BetaSchedule;
  betaStart: number;
  betaEnd: number;
  trainSteps: number;
  prediction: Prediction;
  spacing: Spacing;
  stepsOffset: number;
}

export interface Schedule {
  /** The UNet's timestep at each of the S steps (float; an int64 graph takes them truncated). */
  timesteps: number[];
  /** S + 1 values: the sigma at each step, then 0. */
  sigmas: number[];
  /** What pure noise is scaled by to start a text-to-image run. */
  initNoiseSigma: number;
}

/** numpy's linspace: start + i·step, with the last value exactly `stop`. */
export function linspace(start: number, stop: number, n: number): number[] {
  if (n === 1) return [start];
  const step = (stop - start) / (n - 1);
  const out = Array.from({ length: n }, (_, i) => i * step + start);
  out[n - 1] = stop;
  return out;
}

/** numpy's round: halves go to the even neighbour (812.5 → 812), unlike Math.round. */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** σ at every training timestep: √((1 − ᾱ)/ᾱ) with ᾱ the running product of 1 − β. */
export function trainingSigmas(spec: Pick<SchedulerSpec, "betaSchedule" | "betaStart" | "betaEnd" | "trainSteps">): number[] {
  const n = spec.trainSteps;
  const betas =
    spec.betaSchedule === "scaled_linear"
      ? linspace(Math.sqrt(spec.betaStart), Math.sqrt(spec.betaEnd), n).map((b) => b * b)
      : linspace(spec.betaStart, spec.betaEnd, n);
  let alphaBar = 1;
  return betas.map((beta) => {
    alphaBar *= 1 - beta;
    return Math.sqrt((1 - alphaBar) / alphaBar);
  });
}

/**
 * The S timesteps, highest first. diffusers makes them float32 arrays, so they are rounded to float32 here too.
 * Trailing follows numpy's float arange (start, then start + i·(second − start)) so halves round the same way; it
 * always yields exactly S values (numpy's arange yields S + 1 for some S, e.g. 61 of 1000, which diffusers then runs).
 */
export function timestepsFor(spec: Pick<SchedulerSpec, "spacing" | "trainSteps" | "stepsOffset">, steps: number): number[] {
  const n = spec.trainSteps;
  if (spec.spacing === "linspace") return linspace(0, n - 1, steps).reverse().map(Math.fround);
  if (spec.spacing === "leading") {
    const ratio = Math.floor(n / steps);
    return Array.from({ length: steps }, (_, i) => (steps - 1 - i) * ratio + spec.stepsOffset).map(Math.fround);
  }
  const delta = n + -n / steps - n;
  return Array.from({ length: steps }, (_, i) => Math.fround(roundHalfEven(i === 0 ? n : n + i * delta) - 1));
}

/** numpy's interp over xs = 0, 1, …, len − 1: linear between neighbours, clamped at both ends. */
export function interpIndex(x: number, ys: readonly number[]): number {
  const last = ys.length - 1;
  if (x <= 0) return ys[0]!;
  if (x >= last) return ys[last]!;
  const j = Math.floor(x);
  if (x === j) return ys[j]!;
  return (ys[j + 1]! - ys[j]!) * (x - j) + ys[j]!;
}

export function buildSchedule(spec: SchedulerSpec, steps: number): Schedule {
  if (!Number.isInteger(steps) || steps < 1) throw new Error(`steps must be a positive integer (got ${steps})`);
  const full = trainingSigmas(spec);
  const timesteps = timestepsFor(spec, steps);
  const sigmas = [...timesteps.map((t) => interpIndex(t, full)), 0];
  const max = Math.max(...sigmas);
  const initNoiseSigma = spec.spacing === "leading" ? Math.sqrt(max * max + 1) : max;
  return { timesteps, sigmas, initNoiseSigma };
}

/**
 * Index of the first step an edit runs: the last ⌊S·strength⌋ steps (at least one, at most S) are run, as diffusers'
 * img2img `get_timesteps` does, except that a strength too small for one step still runs one instead of none.
 */
export function editStartIndex(steps: number, strength: number): number {
  const run = Math.max(1, Math.min(Math.trunc(steps * strength), steps));
  return steps - run;
}
