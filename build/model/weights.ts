// Weight names (Hugging Face style), the ordered plan of tensors a spec needs, and their seeded generation in row chunks.
import { tensorRng } from "./rng.ts";
import type { ModelSpec } from "./spec.ts";

/** A linear layer y = x·Wᵀ with W of shape [out, in] (Hugging Face layout). */
export interface Linear {
  name: string;
  in: number;
  out: number;
}

export interface LayerNames {
  inputNorm: string;
  postNorm: string;
  q: Linear;
  k: Linear;
  v: Linear;
  o: Linear;
  gate: Linear;
  up: Linear;
  down: Linear;
  /** Qwen2 has biases on the q/k/v projections; Llama has none. */
  qBias?: string;
  kBias?: string;
  vBias?: string;
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
    const lin = (n: string, i: number, o: number): Linear => ({ name: `${p}.${n}.weight`, in: i, out: o });
    const bias = spec.architecture === "qwen2";
    layers.push({
      inputNorm: `${p}.input_layernorm.weight`,
      postNorm: `${p}.post_attention_layernorm.weight`,
      q: lin("self_attn.q_proj", H, heads * D),
      k: lin("self_attn.k_proj", H, kvHeads * D),
      v: lin("self_attn.v_proj", H, kvHeads * D),
      o: lin("self_attn.o_proj", heads * D, H),
      gate: lin("mlp.gate_proj", H, I),
      up: lin("mlp.up_proj", H, I),
      down: lin("mlp.down_proj", I, H),
      ...(bias
        ? { qBias: `${p}.self_attn.q_proj.bias`, kBias: `${p}.self_attn.k_proj.bias`, vBias: `${p}.self_attn.v_proj.bias` }
        : {}),
    });
  }
  const head = { name: spec.tiedEmbeddings ? embed : "lm_head.weight", in: H, out: spec.vocab };
  return { embed, layers, finalNorm: "model.norm.weight", head };
}

export type WeightKind = "embed" | "linear" | "head" | "norm" | "bias";

/** One tensor to generate: `rows × cols` in Hugging Face layout ([out, in] for linears). */
export interface PlanEntry {
  name: string;
  kind: WeightKind;
  rows: number;
  cols: number;
}

/** Every tensor of the model, in file order. */
export function weightPlan(spec: ModelSpec): PlanEntry[] {
  const n = weightNames(spec);
  const plan: PlanEntry[] = [{ name: n.embed, kind: "embed", rows: spec.vocab, cols: spec.hidden }];
  const lin = (w: Linear): PlanEntry => ({ name: w.name, kind: "linear", rows: w.out, cols: w.in });
  const vec = (name: string | undefined, kind: WeightKind, size: number): PlanEntry[] =>
    name ? [{ name, kind, rows: 1, cols: size }] : [];
  for (const l of n.layers) {
    plan.push(...vec(l.inputNorm, "norm", spec.hidden));
    plan.push(lin(l.q), ...vec(l.qBias, "bias", l.q.out));
    plan.push(lin(l.k), ...vec(l.kBias, "bias", l.k.out));
    plan.push(lin(l.v), ...vec(l.vBias, "bias", l.v.out));
    plan.push(lin(l.o));
    plan.push(...vec(l.postNorm, "norm", spec.hidden));
    plan.push(lin(l.gate), lin(l.up), lin(l.down));
  }
  plan.push(...vec(n.finalNorm, "norm", spec.hidden));
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
  const rng = tensorRng(spec.seed, e.name);
  const rowsPerChunk = e.kind === "linear" ? e.rows : Math.max(1, Math.floor(CHUNK_VALUES / e.cols));
  for (let r = 0; r < e.rows; r += rowsPerChunk) {
    const rows = Math.min(rowsPerChunk, e.rows - r);
    const data = new Float32Array(rows * e.cols);
    rng.fillNormal(data, spec.initStd);
    yield { data, rowStart: r, rows };
  }
}
