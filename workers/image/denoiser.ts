// One image's denoising state: its noise stream, latents and position in the schedule; it takes each step's model
// output (one row, or the unconditional and conditional rows under guidance) and moves the latents on.
import { createRng } from "../text/prng.ts";
import { blendMask, eulerUpdate, guide, modelInput } from "./euler-step.ts";
import { gaussianFill } from "./gaussian.ts";
import { editStartIndex, type Schedule, type SchedulerSpec } from "./schedule.ts";

export interface LatentShape {
  channels: number;
  height: number;
  width: number;
}

export interface DenoiseSetup {
  spec: SchedulerSpec;
  schedule: Schedule;
  shape: LatentShape;
  seed: number;
  /** > 1: two rows a step (unconditional, conditional) combined with this scale. */
  guidance: number;
  /** An edit: the init image's latents (scaled), the share of the schedule run, and optionally the latent mask. */
  init?: { latents: Float32Array; strength: number; mask?: Float32Array };
}

/** UNet rows an image takes each step. */
export const rowsPerImage = (guidance: number): 1 | 2 => (guidance > 1 ? 2 : 1);

export class Denoiser {
  /** Current latents (x, not the model's scaled input). */
  latents: Float32Array;
  /** Index into the schedule of the step to run next. */
  index: number;
  readonly startIndex: number;
  readonly rows: 1 | 2;
  private readonly rng: () => number;
  private readonly noise0: Float64Array;
  private readonly size: number;
  private input: Float32Array | null = null;

  constructor(private readonly setup: DenoiseSetup) {
    const { schedule, shape, init } = setup;
    const steps = schedule.timesteps.length;
    this.size = shape.channels * shape.height * shape.width;
    this.rows = rowsPerImage(setup.guidance);
    this.rng = createRng(setup.seed);
    // ε₀ comes first in the image's stream; ancestral steps draw after it.
    this.noise0 = gaussianFill(this.rng, this.size);
    if (init && init.latents.length !== this.size) throw new Error(`init latents have ${init.latents.length} values, expected ${this.size}`);
    if (init?.mask && init.mask.length !== shape.height * shape.width) throw new Error(`mask has ${init.mask.length} values, expected ${shape.height * shape.width}`);
    this.startIndex = init ? editStartIndex(steps, init.strength) : 0;
    this.index = this.startIndex;
    // A masked edit at full strength starts from noise alone, as diffusers' inpainting does: the masked area keeps no
    // trace of what it covered (outside the mask, every step resets the latents to the noised original anyway).
    const fresh = !init || (init.mask !== undefined && init.strength >= 1);
    const scale = fresh ? schedule.initNoiseSigma : schedule.sigmas[this.startIndex]!;
    this.latents = new Float32Array(this.size);
    for (let i = 0; i < this.size; i++) this.latents[i] = (fresh ? 0 : init!.latents[i]!) + this.noise0[i]! * scale;
  }

  get done(): boolean {
    return this.index >= this.setup.schedule.timesteps.length;
  }

  /** The timestep of the step to run next (as a float; an int64 graph takes it truncated). */
  get timestep(): number {
    return this.setup.schedule.timesteps[this.index]!;
  }

  /** x/√(σ² + 1) for the step to run next; the same array for both guidance rows. */
  modelInput(): Float32Array {
    this.input ??= modelInput(this.latents, this.setup.schedule.sigmas[this.index]!);
    return this.input;
  }

  /** Runs the scheduler step on this step's model output(s): `uncond` is required under guidance. */
  advance(cond: Float32Array, uncond?: Float32Array): void {
    if (this.done) throw new Error("denoiser already finished");
    const { spec, schedule, init, guidance } = this.setup;
    if (this.rows === 2 && !uncond) throw new Error("guidance needs the unconditional row's output");
    const out = this.rows === 2 ? guide(uncond!, cond, guidance) : cond;
    const sigma = schedule.sigmas[this.index]!;
    const next = schedule.sigmas[this.index + 1]!;
    // The ancestral stream draws one fresh tensor per step, after the model ran, even on the last step.
    const noise = spec.ancestral ? gaussianFill(this.rng, this.size) : undefined;
    this.latents = eulerUpdate(this.latents, out, sigma, next, spec.prediction, noise);
    if (init?.mask) blendMask(this.latents, init.latents, this.noise0, next, init.mask, this.setup.shape.height * this.setup.shape.width);
    this.index++;
    this.input = null;
  }
}
