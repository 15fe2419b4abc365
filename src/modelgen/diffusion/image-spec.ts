// The shape of a few-step Stable Diffusion folder kiln can build (CLIP text encoder, UNet, VAE), its validation and identity hash.
import { createHash } from "node:crypto";
import { canonicalJson } from "../spec.ts";

/** A CLIP text transformer: learned positions, pre-LayerNorm layers with causal self-attention and quick_gelu MLPs. */
export interface ClipTextSpec {
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
  layerNormEps: number;
}

/** A UNet2DConditionModel: one entry of `channels` per level; levels after the first start with a stride-2 downsampling. */
export interface UnetSpec {
  channels: number[];
  /** ResNet blocks per down level (up levels have one more, for the extra skip), as diffusers' layers_per_block. */
  layersPerBlock: number;
  /** Which levels carry a spatial transformer (self- and cross-attention); the mid block always has one. */
  attention: boolean[];
  /** Attention heads of every transformer (diffusers reads its `attention_head_dim` as this count). */
  heads: number;
  /** GroupNorm groups; they must divide every level's channels. */
  groups: number;
}

/** AutoencoderKL's encoder and decoder: four levels, three ×2 resamplings (latents are 1/8 of the image). */
export interface VaeSpec {
  channels: [number, number, number, number];
  layersPerBlock: number;
  groups: number;
}

export type SchedulerClass = "EulerDiscreteScheduler" | "EulerAncestralDiscreteScheduler";

export interface ImageModelSpec {
  /** The discriminant against text specs (ModelSpec's architecture is llama or qwen2). */
  architecture: "stable-diffusion";
  id: string;
  displayName: string;
  seed: number;
  /** The square side (pixels) the model is "trained" at; the UNet's sample_size is resolution / 8. */
  resolution: number;
  text: ClipTextSpec;
  /** CLIP vocabulary: 512 byte tokens, one token per learned merge, then <|startoftext|> and <|endoftext|>. */
  vocab: number;
  unet: UnetSpec;
  vae: VaeSpec;
  scheduler: SchedulerClass;
  predictionType: "epsilon" | "v_prediction";
  timestepSpacing: "trailing" | "leading" | "linspace";
  /** The UNet's `timestep` input type (exports differ). */
  timestepType: "int64" | "float32";
  /** `latent_sample` (the mean, 4 channels) or `latent_parameters` (mean ‖ log-variance, 8 channels), as newer exports. */
  vaeEncoderOutput: "latent_sample" | "latent_parameters";
  /** Also write tokenizer/tokenizer.json (Hugging Face tokenizers' CLIP format), as some operator folders carry. */
  tokenizerJson: boolean;
  guidanceScale: number;
  /** img2img strength the manifest advertises. */
  strength: number;
  steps: { low: number; medium: number; high: number };
  aspectRatios: string[];
  maxBatch: number;
  perImage: number;
  /** Conv and linear weights are drawn with std initGain / √fan_in (norms before every conv keep activations O(1)). */
  initGain: number;
  /** Std of the token and position embedding rows. */
  embedStd: number;
}

/** Bumped whenever the image builder's output for a given spec changes (the text builder has its own BUILDER_VERSION). */
export const IMAGE_BUILDER_VERSION = 2;

/** CLIP's context: prompts are padded or cut to 77 tokens. */
export const CLIP_CONTEXT = 77;

/** Latents are 1/8 of the image on each side (three ×2 VAE resamplings). */
export const VAE_FACTOR = 8;

export function isImageSpec(s: { architecture: string }): s is ImageModelSpec {
  return s.architecture === "stable-diffusion";
}

/** The side every pixel size must divide by: the VAE's 8 times the UNet's downsamplings (skips must line up). */
export function pixelMultiple(s: ImageModelSpec): number {
  return VAE_FACTOR * 2 ** (s.unet.channels.length - 1);
}

function positiveInt(v: unknown, what: string): void {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw new Error(`spec.${what} must be a positive integer`);
}

/** Throws with a reason if the spec cannot be built (every graph relies on these invariants). */
export function validateImageSpec(s: ImageModelSpec): void {
  if (s.architecture !== "stable-diffusion") throw new Error('spec.architecture must be "stable-diffusion"');
  if (!/^[a-z0-9]+(?:[.-][a-z0-9]+)*$/.test(s.id)) throw new Error(`spec.id "${s.id}" must be lowercase and hyphenated`);
  if (!Number.isInteger(s.seed) || s.seed < 0 || s.seed > 0xffffffff) throw new Error("spec.seed must be an integer in [0, 2^32)");
  for (const k of ["hidden", "layers", "heads", "intermediate"] as const) positiveInt(s.text[k], `text.${k}`);
  if (s.text.hidden % s.text.heads !== 0) throw new Error("spec.text.hidden must be a multiple of spec.text.heads");
  if (!(s.text.layerNormEps > 0)) throw new Error("spec.text.layerNormEps must be positive");
  positiveInt(s.vocab, "vocab");
  if (s.vocab < 600) throw new Error("spec.vocab must be at least 600 (512 byte tokens, 2 special tokens, some merges)");

  const u = s.unet;
  if (!Array.isArray(u.channels) || u.channels.length < 1 || u.channels.length > 5) throw new Error("spec.unet.channels must list 1 to 5 levels");
  u.channels.forEach((c, i) => positiveInt(c, `unet.channels[${i}]`));
  positiveInt(u.layersPerBlock, "unet.layersPerBlock");
  positiveInt(u.heads, "unet.heads");
  positiveInt(u.groups, "unet.groups");
  if (u.attention.length !== u.channels.length) throw new Error("spec.unet.attention must have one entry per level");
  for (const c of u.channels) {
    if (c % u.groups !== 0) throw new Error(`spec.unet.groups (${u.groups}) must divide every level's channels (${c})`);
    if (c % u.heads !== 0) throw new Error(`spec.unet.heads (${u.heads}) must divide every level's channels (${c})`);
  }
  // The sinusoidal timestep embedding splits the first level's channels into cosine and sine halves.
  if (u.channels[0]! % 2 !== 0 || u.channels[0]! < 4) throw new Error("spec.unet.channels[0] must be even and at least 4");

  const v = s.vae;
  if (!Array.isArray(v.channels) || v.channels.length !== 4) throw new Error("spec.vae.channels must list 4 levels (3 resamplings: factor 8)");
  v.channels.forEach((c, i) => positiveInt(c, `vae.channels[${i}]`));
  positiveInt(v.layersPerBlock, "vae.layersPerBlock");
  positiveInt(v.groups, "vae.groups");
  for (const c of v.channels) if (c % v.groups !== 0) throw new Error(`spec.vae.groups (${v.groups}) must divide every level's channels (${c})`);

  positiveInt(s.resolution, "resolution");
  if (s.resolution % pixelMultiple(s) !== 0) throw new Error(`spec.resolution must be a multiple of ${pixelMultiple(s)} (8 × 2^(UNet levels − 1))`);
  if (!["EulerDiscreteScheduler", "EulerAncestralDiscreteScheduler"].includes(s.scheduler)) throw new Error(`spec.scheduler "${s.scheduler}" is not supported`);
  if (!["epsilon", "v_prediction"].includes(s.predictionType)) throw new Error("spec.predictionType must be epsilon or v_prediction");
  if (!["trailing", "leading", "linspace"].includes(s.timestepSpacing)) throw new Error("spec.timestepSpacing must be trailing, leading or linspace");
  if (!["int64", "float32"].includes(s.timestepType)) throw new Error("spec.timestepType must be int64 or float32");
  if (!["latent_sample", "latent_parameters"].includes(s.vaeEncoderOutput)) throw new Error("spec.vaeEncoderOutput must be latent_sample or latent_parameters");
  if (typeof s.tokenizerJson !== "boolean") throw new Error("spec.tokenizerJson must be true or false");

  if (!(s.guidanceScale >= 0)) throw new Error("spec.guidanceScale must be ≥ 0");
  if (!(s.strength > 0 && s.strength <= 1)) throw new Error("spec.strength must be in (0, 1]");
  for (const q of ["low", "medium", "high"] as const) positiveInt(s.steps[q], `steps.${q}`);
  if (!(s.steps.low <= s.steps.medium && s.steps.medium <= s.steps.high)) throw new Error("spec.steps must not decrease from low to high");
  if (!s.aspectRatios.length || !s.aspectRatios.every((r) => /^[1-9]\d*:[1-9]\d*$/.test(r))) throw new Error('spec.aspectRatios must list ratios like "4:3"');
  positiveInt(s.maxBatch, "maxBatch");
  if (!(s.perImage >= 0)) throw new Error("spec.perImage must be ≥ 0");
  if (!(s.initGain > 0) || !(s.embedStd > 0)) throw new Error("spec.initGain and spec.embedStd must be positive");
}

/** sha256 of the spec and the image builder version: equal hashes mean identical builds. */
export function imageSpecHash(spec: ImageModelSpec): string {
  return createHash("sha256").update(canonicalJson({ spec, builder: IMAGE_BUILDER_VERSION })).digest("hex");
}
