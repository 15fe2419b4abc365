// The BERT-style encoder of kiln's embedding models as one ONNX graph with its weights inline: token, position and
// token-type embeddings, post-norm layers whose self-attention skips padded positions (attention_mask), and
// `last_hidden_state` [B, S, H] out, as Hugging Face's BERT exports have it.
import type { EmbeddingModelSpec } from "./embedding-spec.ts";
import { gelu, layerNorm, type NormNames } from "./graph-ops.ts";
import { GraphBuilder, int, T } from "./onnx-builder.ts";
import { tensorRng } from "./rng.ts";

/** Added to the scores of padded keys: exp of it underflows to exactly 0, so padding adds nothing to a row. */
const MASKED_SCORE = -1e9;

/** The graph's inputs, in the order exports list them. */
export const EMBEDDING_INPUTS = ["input_ids", "attention_mask", "token_type_ids"] as const;

interface Weights {
  g: GraphBuilder;
  spec: EmbeddingModelSpec;
}

/** A named fp32 initializer drawn from the spec's seed and the tensor's name (deterministic per tensor). */
function param({ g, spec }: Weights, name: string, dims: number[], fill: "normal" | "zeros" | "ones"): string {
  const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
  if (fill === "normal") tensorRng(spec.seed, name).fillNormal(data, spec.initStd);
  else if (fill === "ones") data.fill(1);
  g.inline(name, T.FLOAT, dims, new Uint8Array(data.buffer));
  return name;
}

function norm(w: Weights, prefix: string): NormNames {
  return { weight: param(w, `${prefix}.weight`, [w.spec.hidden], "ones"), bias: param(w, `${prefix}.bias`, [w.spec.hidden], "zeros") };
}

/** x·W + b with W stored [in, out] (a MatMul's own layout). */
function dense(w: Weights, x: string, prefix: string, inDim: number, outDim: number): string {
  const weight = param(w, `${prefix}.weight`, [inDim, outDim], "normal");
  return w.g.node("Add", [w.g.node("MatMul", [x, weight]), param(w, `${prefix}.bias`, [outDim], "zeros")]);
}

/** One post-norm layer: masked self-attention, add and norm, then the GELU MLP, add and norm. */
function layer(w: Weights, x: string, scoreBias: string, l: number): string {
  const { g, spec } = w;
  const H = spec.hidden;
  const p = `encoder.layer.${l}`;
  const [q, k, v] = [`${p}.attention.self.query`, `${p}.attention.self.key`, `${p}.attention.self.value`].map((n) => dense(w, x, n, H, H));
  const attn = g.node("Attention", [q!, k!, v!, scoreBias], { q_num_heads: int(spec.heads), kv_num_heads: int(spec.heads) });
  const h = layerNorm(g, g.node("Add", [x, dense(w, attn, `${p}.attention.output.dense`, H, H)]), norm(w, `${p}.attention.output.LayerNorm`), spec.layerNormEps);
  const mlp = dense(w, gelu(g, dense(w, h, `${p}.intermediate.dense`, H, spec.intermediate)), `${p}.output.dense`, spec.intermediate, H);
  return layerNorm(g, g.node("Add", [h, mlp]), norm(w, `${p}.output.LayerNorm`), spec.layerNormEps);
}

/** `input_ids`, `attention_mask`, `token_type_ids` [B, S] (int64) → `last_hidden_state` [B, S, hidden]. */
export function embeddingGraph(spec: EmbeddingModelSpec): GraphBuilder {
  const g = new GraphBuilder();
  const w = { g, spec };
  const [ids, mask, types] = EMBEDDING_INPUTS.map((name) => g.input(name, T.INT64, ["batch_size", "sequence_length"]));
  const words = g.node("Gather", [param(w, "embeddings.word_embeddings.weight", [spec.vocab, spec.hidden], "normal"), ids!]);
  // Positions 0…S−1 for every row: right padding keeps each real token at the position it has alone.
  const length = g.node("Squeeze", [g.node("Slice", [g.node("Shape", [ids!]), g.int64([1]), g.int64([2])]), g.int64([0])]);
  const positions = g.node("Range", [g.int64([0], []), length, g.int64([1], [])]);
  const posRows = g.node("Gather", [param(w, "embeddings.position_embeddings.weight", [spec.maxPositions, spec.hidden], "normal"), positions]);
  const typeRows = g.node("Gather", [param(w, "embeddings.token_type_embeddings.weight", [2, spec.hidden], "normal"), types!]);
  let x = layerNorm(g, g.node("Add", [g.node("Add", [words, posRows]), typeRows]), norm(w, "embeddings.LayerNorm"), spec.layerNormEps);
  // [B, S] mask → [B, 1, S, S] additive scores (ONNX Runtime wants every query row): 0 for a real key, MASKED_SCORE for padding.
  const keep = g.node("Cast", [mask!], { to: int(T.FLOAT) });
  const bias = g.node("Mul", [g.node("Sub", [g.float32([1], []), keep]), g.float32([MASKED_SCORE], [])]);
  const shape = g.node("Shape", [ids!]);
  const batch = g.node("Slice", [shape, g.int64([0]), g.int64([1])]);
  const seq = g.node("Slice", [shape, g.int64([1]), g.int64([2])]);
  const scoreShape = g.node("Concat", [batch, g.int64([1]), seq, seq], { axis: int(0) });
  const scoreBias = g.node("Expand", [g.node("Unsqueeze", [bias, g.int64([1, 2])]), scoreShape]);
  for (let l = 0; l < spec.layers; l++) x = layer(w, x, scoreBias, l);
  g.node("Identity", [x], {}, { output: "last_hidden_state" });
  g.output("last_hidden_state", T.FLOAT, ["batch_size", "sequence_length", spec.hidden]);
  return g;
}
