// How an image model renders: its native resolution and supported sizes, denoising steps per quality, guidance and
// edit strength, read from kiln.json's `image` block (or defaulted) and from the folder's own unet/vae configs.
import { DEFAULT_ASPECT_RATIOS, type ImageSize, supportedSizes } from "./image-sizes.ts";

export const QUALITIES = ["low", "medium", "high"] as const;
export type Quality = (typeof QUALITIES)[number];

export interface DiffusionLayout {
  /** Native side in pixels: sizes keep about resolution² pixels. */
  resolution: number;
  /** Pixel sides are multiples of this: the VAE's scale times the UNet's downsampling. */
  sizeMultiple: number;
  /** Pixels per latent cell along each side. */
  vaeScale: number;
  /** One size per supported aspect ratio; the first is what `size: "auto"` renders. */
  sizes: ImageSize[];
  /** Inference steps of the schedule for each quality. */
  steps: Record<Quality, number>;
  /** Classifier-free guidance scale; ≤ 1: none (turbo models). */
  guidanceScale: number;
  /** Share of the schedule an edit runs by default (img2img strength). */
  strength: number;
  /** Most UNet rows one denoising pass runs. */
  maxBatch: number;
  /** The text encoder's sequence length: prompts are cut to it. */
  textLength: number;
  /** The folder has a VAE encoder, so it can edit images. */
  edits: boolean;
}

/** What the folder itself says (configs and files), before the manifest's choices. */
export interface DiffusionFolderFacts {
  vaeScale: number;
  /** 2^(UNet levels − 1). */
  unetScale: number;
  /** Native resolution the folder's configs give (UNet sample size × VAE scale), if they give one. */
  nativeResolution: number | null;
  textLength: number;
  edits: boolean;
}

type Json = Record<string, unknown>;

function positiveInt(o: Json, key: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = o[key] ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > max) throw new Error(`"image.${key}" must be a whole number from 1 to ${max}`);
  return v;
}

function numberIn(o: Json, key: string, fallback: number, lo: number, hi: number, loOpen = false): number {
  const v = o[key] ?? fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v > hi || v < lo || (loOpen && v === lo)) {
    throw new Error(`"image.${key}" must be a number in ${loOpen ? "(" : "["}${lo}, ${hi}]`);
  }
  return v;
}

function stepsBlock(raw: unknown): Record<Quality, number> {
  const o = (raw ?? {}) as Json;
  if (typeof o !== "object" || Array.isArray(o)) throw new Error(`"image.steps" must be an object of low, medium and high`);
  const unknown = Object.keys(o).filter((k) => !(QUALITIES as readonly string[]).includes(k));
  if (unknown.length) throw new Error(`"image.steps" has unknown qualities ${unknown.join(", ")}; use ${QUALITIES.join(", ")}`);
  const fallback: Record<Quality, number> = { low: 1, medium: 2, high: 4 };
  const out = {} as Record<Quality, number>;
  for (const q of QUALITIES) {
    const v = o[q] ?? fallback[q];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 1000) throw new Error(`"image.steps.${q}" must be a whole number from 1 to 1000`);
    out[q] = v;
  }
  return out;
}

/** The layout from kiln.json's `image` block (absent: defaults) over what the folder says; throws naming the fault. */
export function parseDiffusionLayout(raw: unknown, facts: DiffusionFolderFacts): DiffusionLayout {
  if (raw !== undefined && (!raw || typeof raw !== "object" || Array.isArray(raw))) throw new Error(`"image" must be an object`);
  const o = (raw ?? {}) as Json;
  const sizeMultiple = facts.vaeScale * facts.unetScale;
  const resolution = positiveInt(o, "resolution", facts.nativeResolution ?? 512, 8192);
  if (resolution % sizeMultiple !== 0) throw new Error(`"image.resolution" ${resolution} is not a multiple of ${sizeMultiple} (the VAE scale times the UNet's downsampling)`);
  const ratios = o.aspect_ratios ?? DEFAULT_ASPECT_RATIOS;
  if (!Array.isArray(ratios) || ratios.some((r) => typeof r !== "string")) throw new Error(`"image.aspect_ratios" must be a list of "w:h" strings`);
  return {
    resolution,
    sizeMultiple,
    vaeScale: facts.vaeScale,
    sizes: supportedSizes(ratios as string[], resolution, sizeMultiple),
    steps: stepsBlock(o.steps),
    guidanceScale: numberIn(o, "guidance_scale", 0, 0, 100),
    strength: numberIn(o, "strength", 0.6, 0, 1, true),
    maxBatch: positiveInt(o, "max_batch", 4, 256),
    textLength: facts.textLength,
    edits: facts.edits,
  };
}
