// llama.cpp's quantization mixes: for each file format its llama_ftype number and the ggml type its quantizer
// (src/llama-quant.cpp, llama_tensor_get_type) gives each tensor, by role, layer and row length.
import { GGML_TYPE, ggmlBlockSize, type GgmlType } from "./gguf-blocks.ts";

export type GgufFormat =
  | "f32" | "f16" | "bf16" | "q8_0" | "q4_0" | "q4_1" | "q5_0" | "q5_1"
  | "q2_k" | "q3_k_s" | "q3_k_m" | "q3_k_l" | "q4_k_s" | "q4_k_m" | "q5_k_s" | "q5_k_m" | "q6_k";

/** Each format's general.file_type (enum llama_ftype) and default tensor type (llama_ftype_get_default_type). */
const FORMATS: Record<GgufFormat, { ftype: number; type: GgmlType }> = {
  f32: { ftype: 0, type: GGML_TYPE.F32 },
  q8_0: { ftype: 7, type: GGML_TYPE.Q8_0 },
  q4_0: { ftype: 2, type: GGML_TYPE.Q4_0 },
  f16: { ftype: 1, type: GGML_TYPE.F16 },
  bf16: { ftype: 32, type: GGML_TYPE.BF16 },
  q4_1: { ftype: 3, type: GGML_TYPE.Q4_1 },
  q5_0: { ftype: 8, type: GGML_TYPE.Q5_0 },
  q5_1: { ftype: 9, type: GGML_TYPE.Q5_1 },
  q2_k: { ftype: 10, type: GGML_TYPE.Q2_K },
  q3_k_s: { ftype: 11, type: GGML_TYPE.Q3_K },
  q3_k_m: { ftype: 12, type: GGML_TYPE.Q3_K },
  q3_k_l: { ftype: 13, type: GGML_TYPE.Q3_K },
  q4_k_s: { ftype: 14, type: GGML_TYPE.Q4_K },
  q4_k_m: { ftype: 15, type: GGML_TYPE.Q4_K },
  q5_k_s: { ftype: 16, type: GGML_TYPE.Q5_K },
  q5_k_m: { ftype: 17, type: GGML_TYPE.Q5_K },
  q6_k: { ftype: 18, type: GGML_TYPE.Q6_K },
};

export const GGUF_FORMATS = Object.keys(FORMATS) as readonly GgufFormat[];

/** general.file_type of `format`. */
export function ggufFileType(format: GgufFormat): number {
  return FORMATS[format].ftype;
}

/** What llama.cpp's quantizer knows of a 2-D weight: its name, row length (ne[0]) and the model around it. */
export interface MixTensor {
  name: string;
  rowLength: number;
  /** Layer index, for blk.N tensors. */
  layer?: number;
  layers: number;
  /** Query heads per KV head (n_gqa). */
  gqa: number;
  /** No output.weight: token_embd is the head too, and takes the head's type. */
  tiedEmbeddings: boolean;
}

/** Layers that _M mixes give more bits: the first and last eighth, and every third layer between. */
function useMoreBits(i: number, n: number): boolean {
  return i < Math.trunc(n / 8) || i >= Math.trunc((7 * n) / 8) || (i - Math.trunc(n / 8)) % 3 === 2;
}

/** The type llama.cpp's quantizer picks for a 2-D weight (1-D tensors and norms stay F32) before any fallback. */
function preferredType(format: GgufFormat, t: MixTensor): GgmlType {
  const def = FORMATS[format].type;
  // F32, F16 and BF16 files keep every weight in that type: llama.cpp picks per tensor only for quantized formats.
  if (ggmlBlockSize(def) === 1) return def;
  const i = t.layer ?? 0, n = t.layers;
  const role = roleOf(t.name);
  if (role === "output" || (role === "token_embd" && t.tiedEmbeddings)) {
    if (t.rowLength % ggmlBlockSize(def) !== 0) return GGML_TYPE.Q8_0;
    return def === GGML_TYPE.Q8_0 ? def : GGML_TYPE.Q6_K;
  }
  if (role === "attn_v") {
    if (format === "q2_k") return t.gqa >= 4 ? GGML_TYPE.Q4_K : GGML_TYPE.Q3_K;
    if (format === "q3_k_m") return i < 2 ? GGML_TYPE.Q5_K : GGML_TYPE.Q4_K;
    if (format === "q3_k_l") return GGML_TYPE.Q5_K;
    if ((format === "q4_k_m" || format === "q5_k_m") && useMoreBits(i, n)) return GGML_TYPE.Q6_K;
    if (format === "q4_k_s" && i < 4) return GGML_TYPE.Q5_K;
  } else if (role === "ffn_down") {
    if (format === "q2_k") return GGML_TYPE.Q3_K;
    if (format === "q3_k_m") return i < Math.trunc(n / 16) ? GGML_TYPE.Q5_K : GGML_TYPE.Q4_K;
    if (format === "q3_k_l") return GGML_TYPE.Q5_K;
    if ((format === "q4_k_m" || format === "q5_k_m") && useMoreBits(i, n)) return GGML_TYPE.Q6_K;
    if (format === "q4_k_s" && i < Math.trunc(n / 8)) return GGML_TYPE.Q5_K;
  } else if (role === "attn_output") {
    if (format === "q2_k") return GGML_TYPE.Q3_K;
    if (format === "q3_k_m") return GGML_TYPE.Q4_K;
    if (format === "q3_k_l") return GGML_TYPE.Q5_K;
  }
  return def;
}

function roleOf(name: string): string {
  if (name === "output.weight") return "output";
  if (name === "token_embd.weight") return "token_embd";
  for (const r of ["attn_v.weight", "attn_output.weight", "ffn_down"]) if (name.includes(r)) return r.replace(".weight", "");
  return "other";
}

/** llama.cpp's fallback (tensor_type_fallback) for rows a type's blocks do not divide: K-quants to 32-element types. */
const FALLBACK: Partial<Record<GgmlType, GgmlType>> = {
  [GGML_TYPE.Q2_K]: GGML_TYPE.Q4_0,
  [GGML_TYPE.Q3_K]: GGML_TYPE.Q4_0,
  [GGML_TYPE.Q4_K]: GGML_TYPE.Q5_0,
  [GGML_TYPE.Q5_K]: GGML_TYPE.Q5_1,
  [GGML_TYPE.Q6_K]: GGML_TYPE.Q8_0,
};

/** The ggml type of 2-D weight `t` in a `format` file, as llama.cpp's quantizer would write it. */
export function mixType(format: GgufFormat, t: MixTensor): GgmlType {
  const type = preferredType(format, t);
  if (t.rowLength % ggmlBlockSize(type) === 0) return type;
  const fallback = FALLBACK[type];
  if (fallback === undefined) throw new Error(`gguf: ${t.name} rows of ${t.rowLength} are not whole ${ggmlBlockSize(type)}-element blocks, as ${format} needs`);
  return t.rowLength % ggmlBlockSize(fallback) === 0 ? fallback : GGML_TYPE.F16;
}
