// A GGUF file's metadata as a kiln ModelSpec, and the Hugging Face name of each of its tensors (llama.cpp's names
// mapped back, so one weight source serves both formats).
import { ARCHITECTURES, type Architecture, type ModelSpec } from "../spec.ts";

/** The metadata lookup the mapping needs (numbers, strings). */
export type Meta = (key: string) => unknown;

function num(meta: Meta, key: string, fallback?: number): number {
  const raw = meta(key);
  const v = typeof raw === "bigint" ? Number(raw) : raw;
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`gguf: ${key} is missing or not a number`);
  return v;
}

/** general.architecture, or an error naming it and the ones kiln takes. */
export function ggufArchitecture(meta: Meta): Architecture {
  const a = meta("general.architecture");
  if (typeof a !== "string") throw new Error("gguf: general.architecture is missing");
  if (!(ARCHITECTURES as readonly string[]).includes(a)) throw new Error(`architecture "${a}" is not supported: kiln imports ${ARCHITECTURES.join(", ")}`);
  return a as Architecture;
}

export interface GgufShape {
  /** Rows of token_embd.weight (the vocabulary the weights have). */
  vocab: number;
  /** Whether the file has its own output.weight (otherwise the head is the embedding). */
  hasOutput: boolean;
  /** rope_freqs.weight's values, when the file has them (Llama 3.1's long-context factors). */
  ropeFreqs?: Float32Array;
}

export function specFromGguf(meta: Meta, shape: GgufShape, id: string, displayName: string): ModelSpec {
  const a = ggufArchitecture(meta);
  const hidden = num(meta, `${a}.embedding_length`);
  const heads = num(meta, `${a}.attention.head_count`);
  const kvHeads = num(meta, `${a}.attention.head_count_kv`, heads);
  const headDim = num(meta, `${a}.attention.key_length`, hidden / heads);
  if (num(meta, `${a}.attention.value_length`, headDim) !== headDim) throw new Error("gguf: attention.value_length differs from key_length; kiln's attention takes equal ones");
  const rotated = num(meta, `${a}.rope.dimension_count`, headDim);
  if (rotated !== headDim) throw new Error(`gguf: rope.dimension_count ${rotated} rotates part of each head of ${headDim}; kiln rotates whole heads`);
  const ropeTheta = num(meta, `${a}.rope.freq_base`, 10000);
  const scaling = meta(`${a}.rope.scaling.type`);
  let ropeFreqFactors: number[] | undefined;
  if (shape.ropeFreqs) ropeFreqFactors = Array.from(shape.ropeFreqs);
  else if (scaling === "linear") ropeFreqFactors = new Array<number>(headDim / 2).fill(num(meta, `${a}.rope.scaling.factor`));
  else if (scaling !== undefined && scaling !== "none") throw new Error(`gguf: rope scaling "${String(scaling)}" is not supported (kiln takes linear and Llama 3.1's rope_freqs)`);
  return {
    id,
    displayName,
    architecture: a,
    layers: num(meta, `${a}.block_count`),
    hidden,
    heads,
    kvHeads,
    headDim,
    intermediate: num(meta, `${a}.feed_forward_length`),
    vocab: shape.vocab,
    contextLength: num(meta, `${a}.context_length`),
    tiedEmbeddings: !shape.hasOutput,
    ropeTheta,
    ...(ropeFreqFactors ? { ropeFreqFactors } : {}),
    rmsEps: num(meta, `${a}.attention.layer_norm_rms_epsilon`, 1e-6),
    seed: 0,
    initStd: 0.02,
  };
}

const LAYER_NAMES: Record<string, string> = {
  "input_layernorm.weight": "attn_norm.weight",
  "post_attention_layernorm.weight": "ffn_norm.weight",
  "self_attn.q_proj.weight": "attn_q.weight",
  "self_attn.k_proj.weight": "attn_k.weight",
  "self_attn.v_proj.weight": "attn_v.weight",
  "self_attn.o_proj.weight": "attn_output.weight",
  "self_attn.q_proj.bias": "attn_q.bias",
  "self_attn.k_proj.bias": "attn_k.bias",
  "self_attn.v_proj.bias": "attn_v.bias",
  "self_attn.q_norm.weight": "attn_q_norm.weight",
  "self_attn.k_norm.weight": "attn_k_norm.weight",
  "mlp.gate_proj.weight": "ffn_gate.weight",
  "mlp.up_proj.weight": "ffn_up.weight",
  "mlp.down_proj.weight": "ffn_down.weight",
};
/** Phi-3 files store q/k/v as one tensor and gate/up as one (gate rows first), under these names. */
const FUSED_NAMES: Record<string, string> = {
  "self_attn.qkv_proj.weight": "attn_qkv.weight",
  "mlp.gate_up_proj.weight": "ffn_up.weight",
};
const TOP_NAMES: Record<string, string> = {
  "model.embed_tokens.weight": "token_embd.weight",
  "model.norm.weight": "output_norm.weight",
  "lm_head.weight": "output.weight",
};

/** llama.cpp's name of a Hugging Face tensor name in a file of `arch`, or null when its layout has no such tensor. */
export function ggufName(hf: string, arch: Architecture): string | null {
  if (TOP_NAMES[hf]) return TOP_NAMES[hf]!;
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hf);
  const local = m ? (arch === "phi3" ? FUSED_NAMES[m[2]!] : undefined) ?? LAYER_NAMES[m[2]!] : undefined;
  return m && local ? `blk.${m[1]}.${local}` : null;
}

/**
 * Undoes llama.cpp's regrouping of a "llama" file's q and k rows (its rotary pairs adjacent rows, 2i and 2i + 1; kiln's
 * and Hugging Face's pair rows i and i + D/2): row base + 2i + j of the file is row base + j·D/2 + i of the model.
 */
export function deinterleaveRotaryRows(w: Float32Array, heads: number, headDim: number, cols: number): Float32Array {
  const out = new Float32Array(w.length);
  const half = headDim / 2;
  for (let h = 0; h < heads; h++) {
    const base = h * headDim;
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) out.set(w.subarray((base + 2 * i + j) * cols, (base + 2 * i + j + 1) * cols), (base + j * half + i) * cols);
    }
  }
  return out;
}
