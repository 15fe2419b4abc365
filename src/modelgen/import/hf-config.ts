// A Hugging Face config.json as a kiln ModelSpec: the architecture by its model class, and the hyper-parameters.
import { ARCHITECTURES, type Architecture, type ModelSpec } from "../spec.ts";
import { ropeScalingFactors } from "./rope-scaling.ts";

/** The Hugging Face model classes kiln imports, and the architecture each is. */
export const HF_ARCHITECTURES: Readonly<Record<string, Architecture>> = {
  LlamaForCausalLM: "llama",
  MistralForCausalLM: "llama",
  Qwen2ForCausalLM: "qwen2",
  Qwen3ForCausalLM: "qwen3",
  Phi3ForCausalLM: "phi3",
};

type Json = Record<string, unknown>;

function int(c: Json, key: string): number {
  const v = c[key];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw new Error(`config.json: ${key} must be a positive integer (got ${JSON.stringify(v)})`);
  return v;
}

function num(c: Json, key: string, fallback: number): number {
  const v = c[key] ?? fallback;
  if (typeof v !== "number" || !(v > 0)) throw new Error(`config.json: ${key} must be a positive number`);
  return v;
}

/** The architecture of a config.json, or an error naming its class and the ones kiln takes. */
export function hfArchitecture(c: Json): Architecture {
  const classes = Array.isArray(c.architectures) ? (c.architectures as unknown[]) : [];
  for (const k of classes) if (typeof k === "string" && HF_ARCHITECTURES[k]) return HF_ARCHITECTURES[k]!;
  const named = classes.length ? classes.join(", ") : `model_type ${JSON.stringify(c.model_type)}`;
  throw new Error(`architecture ${named} is not supported: kiln imports ${Object.keys(HF_ARCHITECTURES).join(", ")} (${ARCHITECTURES.join(", ")})`);
}

/** The spec of a Hugging Face decoder; `id` and `displayName` are the import's. */
export function specFromHfConfig(c: Json, id: string, displayName: string): ModelSpec {
  const architecture = hfArchitecture(c);
  const act = c.hidden_act ?? c.hidden_activation ?? "silu";
  if (act !== "silu") throw new Error(`config.json: hidden_act "${String(act)}" is not supported (kiln's ${architecture} MLP is SwiGLU)`);
  const hidden = int(c, "hidden_size");
  const heads = int(c, "num_attention_heads");
  const kvHeads = c.num_key_value_heads === undefined || c.num_key_value_heads === null ? heads : int(c, "num_key_value_heads");
  const headDim = c.head_dim === undefined || c.head_dim === null ? hidden / heads : int(c, "head_dim");
  if (!Number.isInteger(headDim)) throw new Error(`config.json: hidden_size ${hidden} is not a multiple of num_attention_heads ${heads}`);
  if (c.partial_rotary_factor !== undefined && c.partial_rotary_factor !== 1) throw new Error(`config.json: partial_rotary_factor ${String(c.partial_rotary_factor)} rotates part of each head; kiln rotates whole heads`);
  if ((architecture === "llama" || architecture === "phi3") && (c.attention_bias === true || c.mlp_bias === true)) throw new Error("config.json: attention_bias / mlp_bias are not supported for llama");
  const ropeTheta = num(c, "rope_theta", 10000);
  let contextLength = int(c, "max_position_embeddings");
  // Mistral 7B v0.1's sliding window: kiln attends over the whole past, so it serves no longer than the window.
  const window = c.use_sliding_window === false ? null : c.sliding_window;
  if (typeof window === "number" && window > 0 && window < contextLength) contextLength = window;
  const factors = ropeScalingFactors(c.rope_scaling, headDim, ropeTheta);
  return {
    id,
    displayName,
    architecture,
    layers: int(c, "num_hidden_layers"),
    hidden,
    heads,
    kvHeads,
    headDim,
    intermediate: int(c, "intermediate_size"),
    vocab: int(c, "vocab_size"),
    contextLength,
    // Every class kiln takes defaults to an untied head; the importer also ties it when the folder has no lm_head.
    tiedEmbeddings: c.tie_word_embeddings === true,
    ropeTheta,
    ...(factors ? { ropeFreqFactors: factors } : {}),
    rmsEps: num(c, "rms_norm_eps", 1e-6),
    seed: 0,
    initStd: num(c, "initializer_range", 0.02),
  };
}
