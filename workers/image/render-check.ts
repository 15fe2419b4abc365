// Checks one render against the loaded model before it is held: sizes, steps, prompt ids, guidance and the edit's
// init image and mask. A problem here fails the render at once, non-retryably (the same request fails the same way).
import type { RenderRequest } from "../../src/protocol/image.ts";
import type { LatentShape } from "./denoiser.ts";
import type { DiffusionModel } from "./load-diffusion.ts";
import { vaeSizeProblem } from "./vae.ts";

export function latentShapeOf(req: Pick<RenderRequest, "width" | "height">, model: Pick<DiffusionModel, "vae">): LatentShape {
  return { channels: model.vae.channels, height: req.height / model.vae.scale, width: req.width / model.vae.scale };
}

const positiveInt = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0;

/** Why the model cannot render this request, or null. */
export function renderProblem(req: RenderRequest, model: DiffusionModel): string | null {
  const multiple = model.sizeMultiple;
  if (!positiveInt(req.width) || !positiveInt(req.height) || req.width % multiple || req.height % multiple) {
    return `width and height must be positive multiples of ${multiple} (got ${req.width}×${req.height})`;
  }
  if (!positiveInt(req.steps) || req.steps > model.scheduler.trainSteps) return `steps must be an integer from 1 to ${model.scheduler.trainSteps} (got ${req.steps})`;
  if (typeof req.seed !== "number" || !Number.isFinite(req.seed)) return "seed must be a finite number";
  if (typeof req.guidance !== "number" || !Number.isFinite(req.guidance)) return "guidance must be a finite number";
  const ids = model.text.idsProblem(req.promptIds);
  if (ids) return ids;
  if (req.guidance > 1) {
    if (!req.uncondIds) return "guidance above 1 needs the unconditional prompt's ids";
    const u = model.text.idsProblem(req.uncondIds);
    if (u) return `unconditional ids: ${u}`;
    if (req.uncondIds.length !== req.promptIds.length) return "the unconditional ids must be as long as the prompt's";
  }
  const shape = latentShapeOf(req, model);
  const size = model.unet.shapeProblem(shape) ?? vaeSizeProblem(model.decoder.io, shape.height, shape.width, "VAE decoder");
  if (size) return size;
  if (req.init) return initProblem(req, shape, model);
  return null;
}

/**
 * Why the model cannot serve what the server will ask of it (every size it offers, its prompts' length), or null:
 * a graph with fixed dims that the manifest's sizes do not fit would otherwise fail every request of those sizes.
 */
export function servedProblem(model: DiffusionModel, sizes: { width: number; height: number }[], textLength: number): string | null {
  for (const [what, fixed] of [["text encoder", model.text.io.seqLen], ["UNet", model.unet.io.seqLen]] as const) {
    if (fixed !== null && fixed !== textLength) return `the ${what} takes ${fixed} text positions, but the text encoder's config says ${textLength} (text_encoder/config.json max_position_embeddings)`;
  }
  for (const s of sizes) {
    const shape = latentShapeOf(s, model);
    const problem =
      (s.width % model.sizeMultiple || s.height % model.sizeMultiple ? `sides must be multiples of ${model.sizeMultiple}` : null) ??
      model.unet.shapeProblem(shape) ??
      vaeSizeProblem(model.decoder.io, shape.height, shape.width, "VAE decoder") ??
      (model.encoder ? vaeSizeProblem(model.encoder.io, s.height, s.width, "VAE encoder") : null);
    if (problem) return `the size ${s.width}×${s.height} cannot be rendered (${problem}): list only sizes the graphs run in kiln.json (image.resolution, image.aspect_ratios)`;
  }
  return null;
}

function initProblem(req: RenderRequest, shape: LatentShape, model: DiffusionModel): string | null {
  const init = req.init!;
  if (!model.encoder) return "this model has no VAE encoder (vae_encoder/), so it cannot edit images";
  if (!(init.rgb instanceof Uint8Array) || init.rgb.length !== req.width * req.height * 3) return `the init image must be ${req.width}×${req.height} packed RGB (${req.width * req.height * 3} bytes)`;
  if (typeof init.strength !== "number" || !(init.strength > 0 && init.strength <= 1)) return `strength must be in (0, 1] (got ${init.strength})`;
  if (init.mask !== undefined) {
    if (!(init.mask instanceof Float32Array) || init.mask.length !== shape.height * shape.width) return `the mask must hold ${shape.height * shape.width} latent cells (${shape.width}×${shape.height})`;
    if (!init.mask.every((m) => m >= 0 && m <= 1)) return "mask values must be in [0, 1]";
  }
  return vaeSizeProblem(model.encoder.io, req.height, req.width, "VAE encoder");
}
