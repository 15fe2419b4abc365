// The JSON files only media folders have: the LLaVA / Ultravox / kiln-omni config.json, processor configs, and kiln.json's media block.
import { AUDIO, imageTokens, mediaArchitecture, type AudioSpec, type MediaArchitecture, type VisionSpec } from "./media-spec.ts";
import { builtSpecialIds, modelConfig } from "./model-files.ts";
import type { Dtype, ModelSpec } from "./spec.ts";
import { MEDIA_TOKENS, type TokenizerFiles } from "./tokenizer.ts";

type Ids = TokenizerFiles["ids"];
type Json = Record<string, unknown>;

/** CLIP's normalization, which LLaVA's image processor uses. */
const CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073];
const CLIP_STD = [0.26862954, 0.26130258, 0.27577711];

const MODEL_TYPE: Record<MediaArchitecture, string> = { llava: "llava", ultravox: "ultravox", "kiln-omni": "kiln_omni" };
const ARCHITECTURE: Record<MediaArchitecture, string> = {
  llava: "LlavaForConditionalGeneration",
  ultravox: "UltravoxModel",
  "kiln-omni": "KilnOmniForConditionalGeneration",
};
/** transformers.js's processor for the layouts it knows (kiln-omni is kiln's own: no processor_class). */
const PROCESSOR: Partial<Record<MediaArchitecture, string>> = { llava: "LlavaProcessor", ultravox: "UltravoxProcessor" };

function layoutOf(spec: ModelSpec): MediaArchitecture {
  const layout = mediaArchitecture(spec);
  if (!layout) throw new Error(`${spec.id} has no vision or audio encoder`);
  return layout;
}

function tokenId(ids: Ids, kind: "image" | "audio"): number {
  const id = ids[kind];
  if (id === undefined) throw new Error(`the tokenizer has no ${kind} token (build it with media = true)`);
  return id;
}

const visionConfig = (v: VisionSpec): Json => ({
  model_type: "clip_vision_model",
  hidden_size: v.hidden,
  intermediate_size: v.intermediate,
  num_hidden_layers: v.layers,
  num_attention_heads: v.heads,
  image_size: v.imageSize,
  patch_size: v.patchSize,
  num_channels: 3,
  hidden_act: "gelu",
  layer_norm_eps: v.layerNormEps,
});

const audioConfig = (a: AudioSpec): Json => ({
  model_type: "whisper",
  d_model: a.hidden,
  encoder_layers: a.layers,
  encoder_attention_heads: a.heads,
  encoder_ffn_dim: a.intermediate,
  num_mel_bins: a.nMels,
  max_source_positions: (AUDIO.chunkSeconds * AUDIO.sampleRate) / AUDIO.encoderDsFactor,
  activation_function: "gelu",
  layer_norm_eps: a.layerNormEps,
});

/**
 * config.json: the text decoder's config as `text_config` (transformers.js sizes the KV cache from it), the encoders'
 * configs and the placeholder ids. No `ignore_index`: transformers.js's Ultravox would take it for the audio token.
 */
export function mediaModelConfig(spec: ModelSpec, ids: Ids, defaultDtype: Dtype): Json {
  const layout = layoutOf(spec);
  const { "transformers.js_config": tjs, ...text } = modelConfig(spec, builtSpecialIds(ids), defaultDtype);
  return {
    architectures: [ARCHITECTURE[layout]],
    model_type: MODEL_TYPE[layout],
    text_config: text,
    ...(spec.vision
      ? {
          vision_config: visionConfig(spec.vision),
          image_token_index: tokenId(ids, "image"),
          image_seq_length: imageTokens(spec.vision),
          projector_hidden_act: "gelu",
          vision_feature_layer: -1,
          vision_feature_select_strategy: "full",
        }
      : {}),
    ...(spec.audio ? { audio_config: audioConfig(spec.audio), audio_token_index: tokenId(ids, "audio"), stack_factor: spec.audio.stackFactor } : {}),
    hidden_size: spec.hidden,
    vocab_size: spec.vocab,
    tie_word_embeddings: spec.tiedEmbeddings,
    bos_token_id: text.bos_token_id,
    eos_token_id: text.eos_token_id,
    pad_token_id: text.pad_token_id,
    torch_dtype: "float32",
    "transformers.js_config": tjs,
  };
}

/** CLIPImageProcessor: shortest edge to S (bicubic), centre crop S×S, ×1/255, CLIP mean/std. */
export function imagePreprocessorConfig(v: VisionSpec, processorClass?: string): Json {
  return {
    image_processor_type: "CLIPImageProcessor",
    ...(processorClass ? { processor_class: processorClass } : {}),
    do_convert_rgb: true,
    do_resize: true,
    size: { shortest_edge: v.imageSize },
    resample: 3,
    do_center_crop: true,
    crop_size: { height: v.imageSize, width: v.imageSize },
    do_rescale: true,
    rescale_factor: 1 / 255,
    do_normalize: true,
    image_mean: CLIP_MEAN,
    image_std: CLIP_STD,
  };
}

/** WhisperFeatureExtractor over 16 kHz audio (the Ultravox processor passes `max_length` = the clip's samples). */
export function audioPreprocessorConfig(a: AudioSpec, processorClass?: string): Json {
  return {
    feature_extractor_type: "WhisperFeatureExtractor",
    ...(processorClass ? { processor_class: processorClass } : {}),
    feature_size: a.nMels,
    sampling_rate: AUDIO.sampleRate,
    hop_length: AUDIO.hopLength,
    n_fft: AUDIO.nFft,
    chunk_length: AUDIO.chunkSeconds,
    n_samples: AUDIO.chunkSeconds * AUDIO.sampleRate,
    nb_max_frames: (AUDIO.chunkSeconds * AUDIO.sampleRate) / AUDIO.hopLength,
    padding_side: "right",
    padding_value: 0,
    return_attention_mask: false,
  };
}

/** The extra JSON files of a media folder, by name: preprocessor(s) and processor_config.json. */
export function mediaJsonFiles(spec: ModelSpec): Record<string, Json> {
  const layout = layoutOf(spec);
  const cls = PROCESSOR[layout];
  const files: Record<string, Json> = {};
  const processor: Json = cls ? { processor_class: cls } : {};
  if (spec.vision) {
    files["preprocessor_config.json"] = imagePreprocessorConfig(spec.vision, cls);
    Object.assign(processor, { image_token: MEDIA_TOKENS[0], patch_size: spec.vision.patchSize, num_additional_image_tokens: 0, vision_feature_select_strategy: "full" });
  }
  if (spec.audio) {
    // With both encoders the image processor keeps the standard name; the audio one sits beside it.
    files[spec.vision ? "audio_preprocessor_config.json" : "preprocessor_config.json"] = audioPreprocessorConfig(spec.audio, cls);
    Object.assign(processor, { audio_placeholder: MEDIA_TOKENS[1], encoder_ds_factor: AUDIO.encoderDsFactor, stack_factor: spec.audio.stackFactor });
  }
  files["processor_config.json"] = processor;
  return files;
}

/** kiln.json's `media` block: what the core needs to expand placeholders and count tokens. */
export function manifestMedia(spec: ModelSpec, ids: Ids): Json {
  const v = spec.vision, a = spec.audio;
  return {
    layout: layoutOf(spec),
    ...(v ? { image: { token: MEDIA_TOKENS[0], token_id: tokenId(ids, "image"), size: v.imageSize, patch_size: v.patchSize, tokens: imageTokens(v) } } : {}),
    ...(a
      ? {
          audio: {
            token: MEDIA_TOKENS[1],
            token_id: tokenId(ids, "audio"),
            sample_rate: AUDIO.sampleRate,
            hop_length: AUDIO.hopLength,
            n_mels: a.nMels,
            encoder_ds_factor: AUDIO.encoderDsFactor,
            stack_factor: a.stackFactor,
            chunk_seconds: AUDIO.chunkSeconds,
          },
        }
      : {}),
  };
}
