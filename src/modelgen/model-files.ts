// The JSON files of a model folder: config.json, generation_config.json and kiln.json (kiln's manifest).
import { onnxFile } from "./model-graphs.ts";
import { INT8_MAX_LEVEL } from "./quantize.ts";
import type { Architecture, Dtype, ModelSpec } from "./spec.ts";
import type { TokenizerFiles } from "./tokenizer.ts";

/** 2026-01-01T00:00:00Z: fixed, so that builds are byte-identical. */
export const CREATED = 1767225600;

/** A text model's graph file per dtype. */
export const ONNX_FILES: Record<Dtype, string> = {
  fp32: onnxFile("model", "fp32"), q4: onnxFile("model", "q4"), int8: onnxFile("model", "int8"),
  fp16: onnxFile("model", "fp16"), q4f16: onnxFile("model", "q4f16"),
};

type Ids = TokenizerFiles["ids"];

/** The ids config.json and generation_config.json name: the first token, the ends of a turn, padding. */
export interface SpecialIds {
  bos: number | null;
  eos: number[];
  pad: number | null;
}

/** kiln's own tokenizer: <|endoftext|> begins, pads and ends; <|im_end|> ends a turn. */
export function builtSpecialIds(ids: Ids): SpecialIds {
  return { bos: ids.endOfText, eos: [ids.imEnd, ids.endOfText], pad: ids.endOfText };
}

/** The Hugging Face model class of each architecture (config.json's `architectures`). */
export const HF_CLASS: Record<Architecture, string> = { llama: "LlamaForCausalLM", qwen2: "Qwen2ForCausalLM", qwen3: "Qwen3ForCausalLM", phi3: "Phi3ForCausalLM" };

export function modelConfig(spec: ModelSpec, ids: SpecialIds, defaultDtype: Dtype): Record<string, unknown> {
  return {
    architectures: [HF_CLASS[spec.architecture]],
    model_type: spec.architecture,
    hidden_size: spec.hidden,
    intermediate_size: spec.intermediate,
    num_hidden_layers: spec.layers,
    num_attention_heads: spec.heads,
    num_key_value_heads: spec.kvHeads,
    head_dim: spec.headDim,
    max_position_embeddings: spec.contextLength,
    rms_norm_eps: spec.rmsEps,
    rope_theta: spec.ropeTheta,
    vocab_size: spec.vocab,
    tie_word_embeddings: spec.tiedEmbeddings,
    hidden_act: "silu",
    attention_bias: spec.architecture === "qwen2",
    initializer_range: spec.initStd,
    bos_token_id: ids.bos,
    eos_token_id: ids.eos,
    pad_token_id: ids.pad,
    torch_dtype: "float32",
    use_cache: true,
    "transformers.js_config": { dtype: defaultDtype },
  };
}

export function generationConfig(ids: SpecialIds): Record<string, unknown> {
  return { bos_token_id: ids.bos, eos_token_id: ids.eos, pad_token_id: ids.pad, do_sample: false };
}

/** The fields every kiln.json kiln builds opens with: format, identity, owner, fixed creation time, architecture. */
export function manifestHead(spec: { id: string; displayName: string }, architecture: string): Record<string, unknown> {
  return { kiln_manifest: 2, id: spec.id, display_name: spec.displayName, owned_by: "kiln", created: CREATED, architecture };
}

export function kilnManifest(
  spec: ModelSpec,
  dtypes: Dtype[],
  defaultDtype: Dtype,
  build: { specHash: string; contentHash: string },
  /** A media model's `media` block (media-files.ts); text models have none. */
  media?: Record<string, unknown>,
): Record<string, unknown> {
  const capabilities = media
    ? { chat: true, tools: true, reasoning: true, vision: Boolean(spec.vision), audio: Boolean(spec.audio), image_generation: false }
    : { chat: true, tools: true, reasoning: true, vision: false, image_generation: false };
  return {
    ...manifestHead(spec, spec.architecture),
    context_length: spec.contextLength,
    default_dtype: defaultDtype,
    dtypes,
    capabilities,
    pricing: { input_per_million: 0.1, output_per_million: 0.4, per_image: null },
    // The graph masks padded keys exactly (no GroupQueryAttention), so left-padded rows match their solo runs.
    batching: { max_batch: 16, left_padding: "exact" },
    ...(media ? { media } : {}),
    ...(dtypes.includes("int8") ? { quantization: { int8_max_level: INT8_MAX_LEVEL } } : {}),
    build: { seed: spec.seed, spec_hash: build.specHash, content_hash: build.contentHash },
  };
}
