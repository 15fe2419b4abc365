// The image presets (the built-in tiny one and the 512² benchmark size) and named variants of a spec for the layouts exports differ in.
import type { ImageModelSpec } from "./image-spec.ts";

export const TINY_IMAGE_MODEL_ID = "kiln-tiny-image-v1";

/** What every kiln image preset advertises: turbo sampling (no guidance, 1–4 Euler steps), as sd-turbo exports. */
const TURBO = {
  architecture: "stable-diffusion",
  seed: 1,
  scheduler: "EulerDiscreteScheduler",
  predictionType: "epsilon",
  timestepSpacing: "trailing",
  timestepType: "int64",
  vaeEncoderOutput: "latent_sample",
  tokenizerJson: false,
  guidanceScale: 0,
  strength: 0.6,
  steps: { low: 1, medium: 2, high: 4 },
  aspectRatios: ["1:1", "4:3", "3:4", "3:2", "2:3", "16:9", "9:16", "2:1", "1:2"],
  maxBatch: 4,
  perImage: 0.01,
  initGain: 1,
  embedStd: 1,
} as const satisfies Partial<ImageModelSpec>;

export const IMAGE_PRESETS: Record<string, ImageModelSpec> = {
  // Built in: 128² (16×16 latents), one downsampling, a few hundred kB per graph; a UNet pass takes milliseconds.
  "tiny-image": {
    ...TURBO,
    id: TINY_IMAGE_MODEL_ID,
    displayName: "Kiln Tiny Image v1",
    resolution: 128,
    text: { hidden: 32, layers: 2, heads: 2, intermediate: 64, layerNormEps: 1e-5 },
    vocab: 1024,
    unet: { channels: [16, 32], layersPerBlock: 1, attention: [false, true], heads: 2, groups: 8 },
    vae: { channels: [8, 8, 16, 16], layersPerBlock: 1, groups: 4 },
    steps: { ...TURBO.steps },
    aspectRatios: [...TURBO.aspectRatios],
  },
  // Benchmark size: 512² (64×64 latents), cross-attention on the two lower-resolution levels, a VAE light at full size.
  "image-small": {
    ...TURBO,
    id: "kiln-image-small-v1",
    displayName: "Kiln Image Small v1 (random weights)",
    resolution: 512,
    text: { hidden: 256, layers: 4, heads: 4, intermediate: 1024, layerNormEps: 1e-5 },
    vocab: 4096,
    unet: { channels: [64, 128, 256], layersPerBlock: 1, attention: [false, true, true], heads: 4, groups: 32 },
    vae: { channels: [8, 16, 32, 64], layersPerBlock: 1, groups: 8 },
    steps: { ...TURBO.steps },
    aspectRatios: [...TURBO.aspectRatios],
  },
};

/** The options real exports differ in; a variant of a spec changes some of them. */
export type ImageVariantOptions = Partial<Pick<ImageModelSpec, "timestepType" | "vaeEncoderOutput" | "scheduler" | "tokenizerJson">>;

/** Id suffixes of each variant option, so variants of one preset can sit side by side in a models dir. */
const SUFFIX: { [K in keyof Required<ImageVariantOptions>]: (v: NonNullable<ImageVariantOptions[K]>) => string } = {
  timestepType: (v) => `ts-${v}`,
  vaeEncoderOutput: (v) => (v === "latent_parameters" ? "latent-params" : "latent-sample"),
  scheduler: (v) => (v === "EulerAncestralDiscreteScheduler" ? "ancestral" : "euler"),
  tokenizerJson: (v) => (v ? "tokjson" : "no-tokjson"),
};

/**
 * `spec` with the given options, named `<id>-<suffix>…` for each option that differs (e.g. `kiln-tiny-image-v1-ts-float32`).
 * Weights are seeded per tensor name, so a variant keeps the weights of every tensor it shares with `spec`.
 */
export function imageVariant(spec: ImageModelSpec, options: ImageVariantOptions): ImageModelSpec {
  const out: ImageModelSpec = { ...spec, ...options };
  const suffixes: string[] = [];
  for (const key of ["timestepType", "vaeEncoderOutput", "scheduler", "tokenizerJson"] as const) {
    const v = options[key];
    if (v !== undefined && v !== spec[key]) suffixes.push((SUFFIX[key] as (x: typeof v) => string)(v));
  }
  if (!suffixes.length) return out;
  return { ...out, id: `${spec.id}-${suffixes.join("-")}`, displayName: `${spec.displayName} (${suffixes.join(", ")})` };
}
