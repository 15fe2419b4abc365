// Checks one render against the loaded model before it is held: sizes, steps, prompt ids, guidance and the edit's
// init image and mask. A problem here fails the render at once, non-retryably (the same request fails the same way).
import type { RenderRequest } from "../../src/scheduler/image-protocol.ts";
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
