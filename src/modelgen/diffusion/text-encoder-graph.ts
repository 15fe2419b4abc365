// text_encoder/model.onnx: CLIP's text transformer, `input_ids` → `last_hidden_state` and `pooler_output`.
import { float, int, T } from "../onnx-builder.ts";
import { layerNorm } from "../graph-ops.ts";
import { attention, splitLast } from "./attention.ts";
import { CLIP_CONTEXT, type ImageModelSpec } from "./image-spec.ts";
import { linear, type Net } from "./layers.ts";

/** CLIP's activation: x · sigmoid(1.702 · x). */
function quickGelu(n: Net, x: string): string {
  return n.g.node("Mul", [x, n.g.node("Sigmoid", [n.g.node("Mul", [x, n.g.float32([1.702], [])])])]);
}

/**
 * `input_ids` int64 [batch_size, sequence_length] (at most 77) → `last_hidden_state` [batch_size, sequence_length, hidden]
 * and `pooler_output` [batch_size, hidden]: the final state at the first position holding the largest id, which is
 * CLIP's first <|endoftext|> (the last id of the vocabulary), as CLIPTextModel's `input_ids.argmax(-1)` picks it.
 */
export function textEncoderGraph(n: Net, spec: ImageModelSpec): void {
  const { g, p } = n;
  const t = spec.text;
  const H = t.hidden;
  const ids = g.input("input_ids", T.INT64, ["batch_size", "sequence_length"]);
  const prefix = "text_model";
  const tokens = g.node("Gather", [p.normal(`${prefix}.embeddings.token_embedding.weight`, [spec.vocab, H], spec.embedStd), ids]);
  // The first sequence_length rows of the learned position table.
  const length = g.node("Slice", [g.node("Shape", [ids]), g.int64([1]), g.int64([2])]);
  const table = p.normal(`${prefix}.embeddings.position_embedding.weight`, [CLIP_CONTEXT, H], spec.embedStd);
  let x = g.node("Add", [tokens, g.node("Slice", [table, g.int64([0]), length, g.int64([0])])]);

  for (let l = 0; l < t.layers; l++) {
    const pre = `${prefix}.encoder.layers.${l}`;
    const qkv = linear(n, layerNorm(g, x, p.norm(`${pre}.layer_norm1`, H), t.layerNormEps), p.linear(`${pre}.self_attn.qkv_proj`, H, 3 * H));
    const [q, k, v] = splitLast(n, qkv, H, 3);
    // Each token sees itself and the tokens before it (CLIP's causal mask).
    x = g.node("Add", [x, linear(n, attention(n, q!, k!, v!, t.heads, true), p.linear(`${pre}.self_attn.out_proj`, H, H))]);
    const hidden = quickGelu(n, linear(n, layerNorm(g, x, p.norm(`${pre}.layer_norm2`, H), t.layerNormEps), p.linear(`${pre}.mlp.fc1`, H, t.intermediate)));
    x = g.node("Add", [x, linear(n, hidden, p.linear(`${pre}.mlp.fc2`, t.intermediate, H))]);
  }
  const final = p.norm(`${prefix}.final_layer_norm`, H);
  const last = g.node("LayerNormalization", [x, final.weight, final.bias], { axis: int(-1), epsilon: float(t.layerNormEps) }, { output: "last_hidden_state" });

  // Gather each row's state at argmax(input_ids): indices [B, 1, H] for GatherElements along the sequence axis.
  const at = g.node("Unsqueeze", [g.node("ArgMax", [ids], { axis: int(1), keepdims: int(1) }), g.int64([2])]);
  const batch = g.node("Slice", [g.node("Shape", [ids]), g.int64([0]), g.int64([1])]);
  const index = g.node("Expand", [at, g.node("Concat", [batch, g.int64([1, H])], { axis: int(0) })]);
  const pooled = g.node("GatherElements", [last, index], { axis: int(1) });
  g.node("Squeeze", [pooled, g.int64([1])], {}, { output: "pooler_output" });

  g.output("last_hidden_state", T.FLOAT, ["batch_size", "sequence_length", H]);
  g.output("pooler_output", T.FLOAT, ["batch_size", H]);
}
