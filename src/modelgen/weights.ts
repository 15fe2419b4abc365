// Weight names (Hugging Face style), the ordered plan of tensors a spec needs, and their seeded generation in row chunks.
import { tensorRng } from "./rng.ts";
import type { ModelSpec } from "./spec.ts";

/** A linear layer y = x·Wᵀ with W of shape [out, in] (Hugging Face layout). */
export interface Linear {
  name: string;
  in: number;
  out: number;
}

/** Tensors stored as one but generated as named parts (each with its own RNG stream), concatenated row-wise. */
export interface Part {
  name: string;
  size: number;
}

export interface LayerNames {
  inputNorm: string;
  postNorm: string;
  /** q, k and v projections fused along the output axis: one matmul per layer instead of three. */
  qkv: Linear & { parts: Part[] };
  o: Linear;
  /** gate and up projections fused along the output axis. */
  gateUp: Linear & { parts: Part[] };
  down: Linear;
  /** Qwen2 has biases on the q/k/v projections; Llama has none. */
  qkvBias?: { name: string; parts: Part[] };
  /** Qwen3 RMS-norms each head's query and key (weights of headDim) before the rotary embedding. */
  qNorm?: string;
  kNorm?: string;
}

export interface WeightNames {
  embed: string;
  layers: LayerNames[];
  finalNorm: string;
  /** The output projection; with tied embeddings its name is the embedding's. */
  head: Linear;
}

export function weightNames(spec: ModelSpec): WeightNames {
  const { hidden: H, heads, kvHeads, headDim: D, intermediate: I } = spec;
  const embed = "model.embed_tokens.weight";
  const layers: LayerNames[] = [];
  for (let l = 0; l < spec.layers; l++) {
    const p = `model.layers.${l}`;
    const qkvOut = [heads * D, kvHeads * D, kvHeads * D];
    const qkvParts = (suffix: string, per: number) =>
      ["q", "k", "v"].map((n, i) => ({ name: `${p}.self_attn.${n}_proj.${suffix}`, size: qkvOut[i]! * per }));
    layers.push({
      inputNorm: `${p}.input_layernorm.weight`,
      postNorm: `${p}.post_attention_layernorm.weight`,
      qkv: { name: `${p}.self_attn.qkv_proj.weight`, in: H, out: heads * D + 2 * kvHeads * D, parts: qkvParts("weight", H) },
      o: { name: `${p}.self_attn.o_proj.weight`, in: heads * D, out: H },
      gateUp: {
        name: `${p}.mlp.gate_up_proj.weight`,
        in: H,
        out: 2 * I,
        parts: [{ name: `${p}.mlp.gate_proj.weight`, size: I * H }, { name: `${p}.mlp.up_proj.weight`, size: I * H }],
      },
      down: { name: `${p}.mlp.down_proj.weight`, in: I, out: H },
      ...(spec.architecture === "qwen2" ? { qkvBias: { name: `${p}.self_attn.qkv_proj.bias`, parts: qkvParts("bias", 1) } } : {}),
      ...(spec.architecture === "qwen3" ? { qNorm: `${p}.self_attn.q_norm.weight`, kNorm: `${p}.self_attn.k_norm.weight` } : {}),
    });
  }
  const head = { name: spec.tiedEmbeddings ? embed : "lm_head.weight", in: H, out: spec.vocab };
  return { embed, layers, finalNorm: "model.norm.weight", head };
}

/** `tensor`: stored as generated, with `dims` (conv kernels, learned positions, the end-of-audio row). */
export type WeightKind = "embed" | "linear" | "head" | "norm" | "bias" | "tensor";

/** One tensor to generate: `rows × cols` in Hugging Face layout ([out, in] for linears). */
export interface PlanEntry {
  name: string;
  kind: WeightKind;
  rows: number;
  cols: number;
  parts?: Part[];
  /** The stored shape of a `tensor` (its first dim is `rows`, the rest multiply to `cols`). */
  dims?: number[];
  /** The encoder graph that owns the tensor; absent for the text decoder's. */
  graph?: "vision_encoder" | "audio_encoder";
}

/** Every tensor of the model, in file order. */
export function weightPlan(spec: ModelSpec): PlanEntry[] {
  const n = weightNames(spec);
  const plan: PlanEntry[] = [{ name: n.embed, kind: "embed", rows: spec.vocab, cols: spec.hidden }];
  const lin = (w: Linear & { parts?: Part[] }): PlanEntry => ({ name: w.name, kind: "linear", rows: w.out, cols: w.in, parts: w.parts });
  const vec = (name: string, kind: WeightKind, size: number): PlanEntry => ({ name, kind, rows: 1, cols: size });
  for (const l of n.layers) {
    plan.push(vec(l.inputNorm, "norm", spec.hidden), lin(l.qkv));
    if (l.qkvBias) plan.push({ ...vec(l.qkvBias.name, "bias", l.qkv.out), parts: l.qkvBias.parts });
    if (l.qNorm && l.kNorm) plan.push(vec(l.qNorm, "norm", spec.headDim), vec(l.kNorm, "norm", spec.headDim));
    plan.push(lin(l.o), vec(l.postNorm, "norm", spec.hidden), lin(l.gateUp), lin(l.down));
  }
  plan.push(vec(n.finalNorm, "norm", spec.hidden));
  if (!spec.tiedEmbeddings) plan.push({ name: n.head.name, kind: "head", rows: n.head.out, cols: n.head.in });
  return plan;
}

export interface Chunk {
  data: Float32Array;
  rowStart: number;
  rows: number;
}

/** Embedding and head rows arrive in chunks of about this many values, bounding memory for large vocabularies. */
const CHUNK_VALUES = 1 << 22;

/**
 * Yields the tensor's values in row chunks. Linear weights come whole (writers transpose them); the chunking of
 * the others does not change the values, since one RNG stream per tensor runs through all its chunks.
 */
export function* generateWeight(spec: ModelSpec, e: PlanEntry): Generator<Chunk> {
  if (e.kind === "norm") {
    yield { data: new Float32Array(e.cols).fill(1), rowStart: 0, rows: 1 };
    return;
  }
  if (e.parts) {
    // Fused tensors come whole: each part from its own stream, so values do not depend on the fusion.
    const data = new Float32Array(e.rows * e.cols);
    let at = 0;
    for (const p of e.parts) {
      tensorRng(spec.seed, p.name).fillNormal(data.subarray(at, at + p.size), spec.initStd);
      at += p.size;
    }
    if (at !== data.length) throw new Error(`fused tensor ${e.name}: parts cover ${at} of ${data.length} values`);
    yield { data, rowStart: 0, rows: e.rows };
    return;
  }
  const rng = tensorRng(spec.seed, e.name);
  const rowsPerChunk = e.kind === "linear" || e.kind === "tensor" ? e.rows : Math.max(1, Math.floor(CHUNK_VALUES / e.cols));
  for (let r = 0; r < e.rows; r += rowsPerChunk) {
    const rows = Math.min(rowsPerChunk, e.rows - r);
    const data = new Float32Array(rows * e.cols);
    rng.fillNormal(data, e.kind === "embed" ? (spec.embedStd ?? spec.initStd) : spec.initStd);
    yield { data, rowStart: r, rows };
  }
}
