// The JSON files of an image model folder: model_index.json, the scheduler, text encoder, UNet and VAE configs, and kiln.json.
import { manifestHead } from "../model-files.ts";
import type { ClipVocabulary } from "./clip-bpe.ts";
import { CLIP_CONTEXT, type ImageModelSpec } from "./image-spec.ts";
import { LATENT_CHANNELS } from "./unet-graph.ts";

const DIFFUSERS_VERSION = "0.30.0";
/** Stable Diffusion's latent scale: the pipeline divides latents by it before the decoder and multiplies encoder output by it. */
export const SCALING_FACTOR = 0.18215;

/** optimum's ORTStableDiffusionPipeline index: which library class loads each subfolder. */
export function modelIndex(spec: ImageModelSpec): Record<string, unknown> {
  return {
    _class_name: "ORTStableDiffusionPipeline",
    _diffusers_version: DIFFUSERS_VERSION,
    feature_extractor: [null, null],
    requires_safety_checker: false,
    safety_checker: [null, null],
    scheduler: ["diffusers", spec.scheduler],
    text_encoder: ["transformers", "CLIPTextModel"],
    tokenizer: ["transformers", "CLIPTokenizer"],
    unet: ["diffusers", "UNet2DConditionModel"],
    vae_decoder: ["diffusers", "AutoencoderKL"],
    vae_encoder: ["diffusers", "AutoencoderKL"],
  };
}

/** Stable Diffusion's noise schedule (scaled_linear 0.00085–0.012 over 1000 steps) with the spec's sampler settings. */
export function schedulerConfig(spec: ImageModelSpec): Record<string, unknown> {
  return {
    _class_name: spec.scheduler,
    _diffusers_version: DIFFUSERS_VERSION,
    beta_end: 0.012,
    beta_schedule: "scaled_linear",
    beta_start: 0.00085,
    clip_sample: false,
    interpolation_type: "linear",
    num_train_timesteps: 1000,
    prediction_type: spec.predictionType,
    set_alpha_to_one: false,
    skip_prk_steps: true,
    steps_offset: 1,
    timestep_spacing: spec.timestepSpacing,
    trained_betas: null,
    use_karras_sigmas: false,
  };
}

export function textEncoderConfig(spec: ImageModelSpec, vocab: ClipVocabulary): Record<string, unknown> {
  const t = spec.text;
  return {
    architectures: ["CLIPTextModel"],
    model_type: "clip_text_model",
    hidden_size: t.hidden,
    intermediate_size: t.intermediate,
    num_hidden_layers: t.layers,
    num_attention_heads: t.heads,
    max_position_embeddings: CLIP_CONTEXT,
    vocab_size: spec.vocab,
    hidden_act: "quick_gelu",
    layer_norm_eps: t.layerNormEps,
    attention_dropout: 0,
    bos_token_id: vocab.startId,
    eos_token_id: vocab.endId,
    pad_token_id: vocab.endId,
    projection_dim: t.hidden,
    torch_dtype: "float32",
  };
}

export function unetConfig(spec: ImageModelSpec): Record<string, unknown> {
  const u = spec.unet;
  return {
    _class_name: "UNet2DConditionModel",
    _diffusers_version: DIFFUSERS_VERSION,
    act_fn: "silu",
    // diffusers reads this as the number of heads (a historical misnomer kept by every SD config).
    attention_head_dim: u.heads,
    block_out_channels: u.channels,
    center_input_sample: false,
    cross_attention_dim: spec.text.hidden,
    down_block_types: u.attention.map((a) => (a ? "CrossAttnDownBlock2D" : "DownBlock2D")),
    downsample_padding: 1,
    flip_sin_to_cos: true,
    freq_shift: 0,
    in_channels: LATENT_CHANNELS,
    layers_per_block: u.layersPerBlock,
    mid_block_type: "UNetMidBlock2DCrossAttn",
    norm_eps: 1e-5,
    norm_num_groups: u.groups,
    out_channels: LATENT_CHANNELS,
    sample_size: spec.resolution / 8,
    time_embedding_type: "positional",
    transformer_layers_per_block: 1,
    up_block_types: [...u.attention].reverse().map((a) => (a ? "CrossAttnUpBlock2D" : "UpBlock2D")),
    upcast_attention: false,
    use_linear_projection: true,
  };
}

/** The same AutoencoderKL config sits beside both VAE halves. */
export function vaeConfig(spec: ImageModelSpec): Record<string, unknown> {
  const v = spec.vae;
  return {
    _class_name: "AutoencoderKL",
    _diffusers_version: DIFFUSERS_VERSION,
    act_fn: "silu",
    block_out_channels: v.channels,
    down_block_types: v.channels.map(() => "DownEncoderBlock2D"),
    in_channels: 3,
    latent_channels: LATENT_CHANNELS,
    layers_per_block: v.layersPerBlock,
    mid_block_add_attention: false,
    norm_num_groups: v.groups,
    out_channels: 3,
    sample_size: spec.resolution,
    scaling_factor: SCALING_FACTOR,
    up_block_types: v.channels.map(() => "UpDecoderBlock2D"),
  };
}

/** kiln.json for an image model: no chat, a per-image price, and the sampling defaults the server uses. */
export function imageManifest(spec: ImageModelSpec, build: { specHash: string; contentHash: string }): Record<string, unknown> {
  return {
    ...manifestHead(spec, "stable-diffusion"),
    capabilities: { chat: false, tools: false, reasoning: false, vision: false, audio: false, image_generation: true },
    pricing: { input_per_million: 0, output_per_million: 0, per_image: spec.perImage },
    image: {
      resolution: spec.resolution,
      aspect_ratios: spec.aspectRatios,
      steps: { low: spec.steps.low, medium: spec.steps.medium, high: spec.steps.high },
      guidance_scale: spec.guidanceScale,
      strength: spec.strength,
      max_batch: spec.maxBatch,
    },
    build: { seed: spec.seed, spec_hash: build.specHash, content_hash: build.contentHash },
  };
}
