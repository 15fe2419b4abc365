// A kiln spec as a GGUF file llama.cpp loads: the same seeded weights as the ONNX builds, named and laid out as llama.cpp expects.
import { CHAT_TEMPLATE } from "./chat-template.ts";
import { encodeTensor, GGML_TYPE } from "./gguf-blocks.ts";
import { GGUF_ALIGNMENT, GgufWriter, type GgufKv, type GgufTensorInfo } from "./gguf-file.ts";
import { ggufFileType, mixType, type GgufFormat } from "./ggml-mix.ts";
import { validateSpec, type ModelSpec } from "./spec.ts";
import { buildTokenizer, SPECIAL_TOKENS } from "./tokenizer.ts";
import { generateWeight, weightPlan, type Chunk, type PlanEntry } from "./weights.ts";
import { nextTurn } from "./next-turn.ts";

export { GGUF_FORMATS, type GgufFormat } from "./ggml-mix.ts";

/** llama.cpp's token types: normal and control. */
const TOKEN_NORMAL = 1, TOKEN_CONTROL = 3;

/**
 * GGUF metadata for `spec`: the architecture's hyperparameters and a tokenizer: `tokenizerKv` (the tokenizer.* keys
 * of another file) when given, else kiln's byte-level BPE.
 */
export function ggufMetadata(spec: ModelSpec, format: GgufFormat, tokenizerKv?: GgufKv[]): GgufKv[] {
  const a = spec.architecture;
  const stray = tokenizerKv?.find((kv) => !kv.key.startsWith("tokenizer."));
  if (stray) throw new Error(`gguf: tokenizerKv may hold only tokenizer.* keys, not ${stray.key}`);
  const u32 = (key: string, value: number): GgufKv => ({ key, type: "u32", value });
  const f32 = (key: string, value: number): GgufKv => ({ key, type: "f32", value });
  return [
    { key: "general.architecture", type: "string", value: a },
    { key: "general.name", type: "string", value: spec.displayName },
    u32("general.alignment", GGUF_ALIGNMENT),
    u32("general.file_type", ggufFileType(format)),
    u32("general.quantization_version", 2),
    u32(`${a}.context_length`, spec.contextLength),
    u32(`${a}.embedding_length`, spec.hidden),
    u32(`${a}.block_count`, spec.layers),
    u32(`${a}.feed_forward_length`, spec.intermediate),
    u32(`${a}.attention.head_count`, spec.heads),
    u32(`${a}.attention.head_count_kv`, spec.kvHeads),
    // Stated outright: llama.cpp would otherwise assume hidden / heads, which kiln's specs need not equal.
    u32(`${a}.attention.key_length`, spec.headDim),
    u32(`${a}.attention.value_length`, spec.headDim),
    u32(`${a}.rope.dimension_count`, spec.headDim),
    f32(`${a}.rope.freq_base`, spec.ropeTheta),
    f32(`${a}.attention.layer_norm_rms_epsilon`, spec.rmsEps),
    u32(`${a}.vocab_size`, spec.vocab),
    ...(tokenizerKv ?? kilnTokenizerKv(spec)),
  ];
}

/** kiln's own tokenizer as llama.cpp's tokenizer.* keys: GPT-2 style byte-level BPE with ChatML specials. */
function kilnTokenizerKv(spec: ModelSpec): GgufKv[] {
  const tok = buildTokenizer(spec.vocab, spec.contextLength);
  const model = tok.tokenizerJson.model as { vocab: Record<string, number>; merges: [string, string][] };
  const tokens: string[] = new Array(spec.vocab);
  for (const [t, id] of Object.entries(model.vocab)) tokens[id] = t;
  if (tokens.some((t) => t === undefined)) throw new Error("gguf: the tokenizer leaves vocabulary ids without a token");
  const special = new Set<string>(SPECIAL_TOKENS);
  const u32 = (key: string, value: number): GgufKv => ({ key, type: "u32", value });
  return [
    { key: "tokenizer.ggml.model", type: "string", value: "gpt2" },
    // kiln pre-tokenizes with GPT-2's pattern (byte-level.ts), which llama.cpp knows as "gpt-2".
    { key: "tokenizer.ggml.pre", type: "string", value: "gpt-2" },
    { key: "tokenizer.ggml.tokens", type: "string[]", value: tokens },
    { key: "tokenizer.ggml.token_type", type: "i32[]", value: tokens.map((t) => (special.has(t) ? TOKEN_CONTROL : TOKEN_NORMAL)) },
    { key: "tokenizer.ggml.merges", type: "string[]", value: model.merges.map(([l, r]) => `${l} ${r}`) },
    u32("tokenizer.ggml.bos_token_id", tok.ids.endOfText),
    u32("tokenizer.ggml.eos_token_id", tok.ids.imEnd),
    u32("tokenizer.ggml.padding_token_id", tok.ids.endOfText),
    { key: "tokenizer.ggml.add_bos_token", type: "bool", value: false },
    { key: "tokenizer.chat_template", type: "string", value: CHAT_TEMPLATE },
  ];
}

/**
 * Where a GGUF tensor's values come from in kiln's weight plan: rows [start, start + count) of a matrix, or for 1-D
 * tensors (norms, biases, which the plan holds as one row) the elements [start, start + count).
 */
interface Source {
  plan: string;
  start: number;
  count: number;
  /** Llama's q/k rows regrouped for llama.cpp's rotary layout (see interleaveRotaryRows). */
  ropeHeads?: number;
}

type Planned = GgufTensorInfo & { source: Source };

/** llama.cpp's tensor of per-pair rotary frequency factors (ModelSpec.ropeFreqFactors). */
const ROPE_FREQS = "rope_freqs.weight";

/** Every GGUF tensor of `spec` in file order, with dims in ggml order and where its values come from. */
export function ggufTensorPlan(spec: ModelSpec, format: GgufFormat): Planned[] {
  const { hidden: H, heads: NH, kvHeads: KV, headDim: D, intermediate: I } = spec;
  const out: Planned[] = [];
  const vec = (name: string, plan: string, start: number, count: number) => out.push({ name, dims: [count], type: GGML_TYPE.F32, source: { plan, start, count } });
  // Matrices take the type llama.cpp's quantizer would give them in this format; 1-D tensors stay F32 (as llama.cpp keeps them).
  const mat = (name: string, plan: string, cols: number, start: number, rows: number, ropeHeads?: number) => {
    const layer = /^blk\.(\d+)\./.exec(name)?.[1];
    const mix = { name, rowLength: cols, layer: layer === undefined ? undefined : Number(layer), layers: spec.layers, gqa: NH / KV, tiedEmbeddings: spec.tiedEmbeddings };
    out.push({ name, dims: [cols, rows], type: mixType(format, mix), source: { plan, start, count: rows, ropeHeads } });
  };
  // llama.cpp's "llama" graph rotates adjacent pairs; kiln (and Qwen2 in llama.cpp) rotate halves.
  const rope = (n: number) => (spec.architecture === "llama" ? n : undefined);
  // Llama 3.1's frequency factors, first: they are no plan entry, and the writer appends them before the weights.
  if (spec.ropeFreqFactors) vec(ROPE_FREQS, ROPE_FREQS, 0, D / 2);
  for (const e of weightPlan(spec)) {
    const l = /\.layers\.(\d+)\./.exec(e.name)?.[1];
    const blk = `blk.${l}`;
    if (e.kind === "embed") mat("token_embd.weight", e.name, H, 0, e.rows);
    else if (e.kind === "head") mat("output.weight", e.name, H, 0, e.rows);
    else if (e.kind === "norm") {
      const name =
        l === undefined ? "output_norm.weight"
        : e.name.includes("input_layernorm") ? `${blk}.attn_norm.weight`
        : e.name.endsWith("self_attn.q_norm.weight") ? `${blk}.attn_q_norm.weight`
        : e.name.endsWith("self_attn.k_norm.weight") ? `${blk}.attn_k_norm.weight`
        : `${blk}.ffn_norm.weight`;
      vec(name, e.name, 0, e.cols);
    } else if (e.kind === "bias") {
      vec(`${blk}.attn_q.bias`, e.name, 0, NH * D);
      vec(`${blk}.attn_k.bias`, e.name, NH * D, KV * D);
      vec(`${blk}.attn_v.bias`, e.name, NH * D + KV * D, KV * D);
    } else if (spec.architecture === "phi3" && e.name.endsWith("qkv_proj.weight")) mat(`${blk}.attn_qkv.weight`, e.name, H, 0, e.rows);
    else if (spec.architecture === "phi3" && e.name.endsWith("gate_up_proj.weight")) mat(`${blk}.ffn_up.weight`, e.name, H, 0, 2 * I);
    else if (e.name.endsWith("qkv_proj.weight")) {
      mat(`${blk}.attn_q.weight`, e.name, H, 0, NH * D, rope(NH));
      mat(`${blk}.attn_k.weight`, e.name, H, NH * D, KV * D, rope(KV));
      mat(`${blk}.attn_v.weight`, e.name, H, NH * D + KV * D, KV * D);
    } else if (e.name.endsWith("o_proj.weight")) mat(`${blk}.attn_output.weight`, e.name, NH * D, 0, H);
    else if (e.name.endsWith("gate_up_proj.weight")) {
      mat(`${blk}.ffn_gate.weight`, e.name, H, 0, I);
      mat(`${blk}.ffn_up.weight`, e.name, H, I, I);
    } else if (e.name.endsWith("down_proj.weight")) mat(`${blk}.ffn_down.weight`, e.name, I, 0, H);
    else throw new Error(`gguf: no llama.cpp name for ${e.name}`);
  }
  return out;
}

/**
 * Reorders each head's rows from rotate-half pairing (i, i + D/2) to adjacent pairing (2i, 2i + 1). Applied to both q
 * and k, it leaves every q·k product unchanged, so llama.cpp's "llama" rotary computes what kiln's graph computes.
 */
export function interleaveRotaryRows(w: Float32Array, heads: number, headDim: number, cols: number): Float32Array {
  const out = new Float32Array(w.length);
  const half = headDim / 2;
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      const base = h * headDim;
      out.set(w.subarray((base + i) * cols, (base + i + 1) * cols), (base + 2 * i) * cols);
      out.set(w.subarray((base + half + i) * cols, (base + half + i + 1) * cols), (base + 2 * i + 1) * cols);
    }
  }
  return out;
}

export interface WriteGgufOptions {
  onProgress?: (done: number, total: number, label: string) => void;
  /** The tokenizer.* keys to write instead of kiln's own tokenizer (e.g. those of an imported model). */
  tokenizerKv?: GgufKv[];
  /** Each plan entry's values in row chunks, instead of kiln's seeded random weights. */
  weights?: (spec: ModelSpec, e: PlanEntry) => Iterable<Chunk>;
}

/** Writes `spec` as a GGUF file in `format` at `path`, taking each weight once from `opts.weights` (kiln's seeded streams by default). */
export async function writeGgufModel(spec: ModelSpec, format: GgufFormat, path: string, opts: WriteGgufOptions = {}): Promise<void> {
  validateSpec(spec);
  const { onProgress, weights = generateWeight } = opts;
  const tensors = ggufTensorPlan(spec, format);
  const byPlan = new Map<string, Planned[]>();
  for (const t of tensors) byPlan.set(t.source.plan, [...(byPlan.get(t.source.plan) ?? []), t]);
  const writer = new GgufWriter(path, ggufMetadata(spec, format, opts.tokenizerKv), tensors);
  const plan = weightPlan(spec);
  const total = plan.reduce((s, e) => s + e.rows * e.cols, 0);
  let done = 0;
  try {
    if (spec.ropeFreqFactors) writer.append(ROPE_FREQS, encodeTensor(GGML_TYPE.F32, Float32Array.from(spec.ropeFreqFactors)));
    for (const e of plan) {
      for (const chunk of weights(spec, e)) {
        for (const t of byPlan.get(e.name) ?? []) writeRows(writer, t, chunk, e.cols, spec.headDim);
        done += chunk.rows * e.cols;
        onProgress?.(done, total, e.name);
      }
      // Lets timers and signal handlers run during long builds.
      await nextTurn();
    }
  } catch (e) {
    writer.abort();
    throw e;
  }
  writer.close();
}

/** Appends the part of `chunk` that belongs to tensor `t`; 1-D plan entries (norms, biases) arrive whole as one row. */
function writeRows(writer: GgufWriter, t: Planned, chunk: Chunk, cols: number, headDim: number): void {
  const s = t.source;
  if (t.dims.length === 1) return writer.append(t.name, encodeTensor(t.type, chunk.data.slice(s.start, s.start + s.count)));
  const from = Math.max(s.start, chunk.rowStart);
  const to = Math.min(s.start + s.count, chunk.rowStart + chunk.rows);
  if (from >= to) return;
  let rows = chunk.data.subarray((from - chunk.rowStart) * cols, (to - chunk.rowStart) * cols);
  if (s.ropeHeads !== undefined) {
    if (from !== s.start || to !== s.start + s.count) throw new Error(`gguf: ${t.name} must arrive whole to regroup its rotary rows`);
    rows = interleaveRotaryRows(rows, s.ropeHeads, headDim, cols);
  }
  writer.append(t.name, encodeTensor(t.type, rows));
}
