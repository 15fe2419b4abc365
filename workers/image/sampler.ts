// The denoising loop on its own, for one image: what the engine runs per render, driven directly (tests compare it
// step by step with an independent reference). Text embeddings and init latents come in ready-made.
import { Denoiser, type LatentShape } from "./denoiser.ts";
import { type GraphSession, unetIO } from "./graph-io.ts";
import { buildSchedule, type SchedulerSpec } from "./schedule.ts";
import { type Embedding, UnetRunner } from "./unet-runner.ts";

export interface SampleOptions {
  /** Any graph with the UNet's inputs and outputs. */
  unet: GraphSession;
  scheduler: SchedulerSpec;
  shape: LatentShape;
  cond: Embedding;
  /** The unconditional row's embedding; required when guidance > 1. */
  uncond?: Embedding;
  guidance: number;
  seed: number;
  steps: number;
  /** An edit: scaled init latents (bypassing the VAE), strength in (0, 1], optional latent mask (1 = may change). */
  init?: { latents: Float32Array; strength: number; mask?: Float32Array };
  /** Called with the latents before the first step (step = −1) and after each step (the schedule's step index). */
  onLatents?: (step: number, latents: Float32Array) => void;
}

/** Runs the image's schedule to the end; returns the latents before the first step and after each step, in order. */
export async function sampleLatents(opts: SampleOptions): Promise<Float32Array[]> {
  const runner = new UnetRunner(opts.unet, unetIO(opts.unet));
  const d = new Denoiser({
    spec: opts.scheduler,
    schedule: buildSchedule(opts.scheduler, opts.steps),
    shape: opts.shape,
    seed: opts.seed,
    guidance: opts.guidance,
    ...(opts.init ? { init: opts.init } : {}),
  });
  if (d.rows === 2 && !opts.uncond) throw new Error("guidance above 1 needs the unconditional embedding");
  const seen: Float32Array[] = [d.latents];
  opts.onLatents?.(-1, d.latents);
  while (!d.done) {
    const step = d.index;
    const sample = d.modelInput();
    const rows = d.rows === 2 ? [opts.uncond!, opts.cond] : [opts.cond];
    const outs = await runner.run(
      rows.map((hidden) => ({ sample, timestep: d.timestep, hidden })),
      opts.shape,
    );
    if (d.rows === 2) d.advance(outs[1]!, outs[0]!);
    else d.advance(outs[0]!);
    seen.push(d.latents);
    opts.onLatents?.(step, d.latents);
  }
  return seen;
}
