// Attention layers: the UNet's spatial transformer (self-attention, cross-attention over the prompt, GEGLU feed-forward).
import { int, ints } from "../onnx-builder.ts";
import { gelu, layerNorm } from "../graph-ops.ts";
import { groupNorm, linear, type Net } from "./layers.ts";

/** Opset-23 Attention over [B, S, heads·D] queries and [B, S_kv, heads·D] keys and values; scale 1/√D. */
export function attention(n: Net, q: string, k: string, v: string, heads: number, causal = false): string {
  return n.g.node("Attention", [q, k, v], { q_num_heads: int(heads), kv_num_heads: int(heads), ...(causal ? { is_causal: int(1) } : {}) });
}

/** Splits the last axis into `count` equal parts. */
export function splitLast(n: Net, x: string, size: number, count: number): string[] {
  return n.g.nodeN("Split", [x, n.g.int64(new Array(count).fill(size))], { axis: int(-1) }, { count });
}

const LN_EPS = 1e-5;

/**
 * diffusers' BasicTransformerBlock over [B, S, C]: pre-LayerNorm self-attention, cross-attention to `context`
 * [B, S_text, contextDim], and a GEGLU feed-forward (4·C inner), each added back. Projections to q/k/v have no bias.
 */
function transformerBlock(n: Net, x: string, prefix: string, channels: number, heads: number, context: { states: string; dim: number }): string {
  const { g, p } = n;
  const C = channels;
  const ln = (h: string, name: string) => layerNorm(g, h, p.norm(`${prefix}.${name}`, C), LN_EPS);

  const self = linear(n, ln(x, "norm1"), p.linear(`${prefix}.attn1.to_qkv`, C, 3 * C, false));
  const [q1, k1, v1] = splitLast(n, self, C, 3);
  let h = g.node("Add", [x, linear(n, attention(n, q1!, k1!, v1!, heads), p.linear(`${prefix}.attn1.to_out.0`, C, C))]);

  const q2 = linear(n, ln(h, "norm2"), p.linear(`${prefix}.attn2.to_q`, C, C, false));
  const [k2, v2] = splitLast(n, linear(n, context.states, p.linear(`${prefix}.attn2.to_kv`, context.dim, 2 * C, false)), C, 2);
  h = g.node("Add", [h, linear(n, attention(n, q2, k2!, v2!, heads), p.linear(`${prefix}.attn2.to_out.0`, C, C))]);

  const [value, gate] = splitLast(n, linear(n, ln(h, "norm3"), p.linear(`${prefix}.ff.net.0.proj`, C, 8 * C)), 4 * C, 2);
  const ff = linear(n, g.node("Mul", [value!, gelu(g, gate!)]), p.linear(`${prefix}.ff.net.2`, 4 * C, C));
  return g.node("Add", [h, ff]);
}

/**
 * diffusers' Transformer2DModel with a linear projection (use_linear_projection): GroupNorm, [B, C, H, W] → [B, H·W, C],
 * proj_in, one transformer block, proj_out, back to [B, C, H, W], plus the input.
 */
export function spatialTransformer(
  n: Net,
  x: string,
  prefix: string,
  channels: number,
  heads: number,
  groups: number,
  context: { states: string; dim: number },
): string {
  const { g, p } = n;
  const normed = groupNorm(n, x, `${prefix}.norm`, channels, groups, 1e-6);
  const tokens = g.node("Transpose", [g.node("Reshape", [normed, g.int64([0, channels, -1])])], { perm: ints([0, 2, 1]) });
  let h = linear(n, tokens, p.linear(`${prefix}.proj_in`, channels, channels));
  h = transformerBlock(n, h, `${prefix}.transformer_blocks.0`, channels, heads, context);
  h = linear(n, h, p.linear(`${prefix}.proj_out`, channels, channels));
  const back = g.node("Reshape", [g.node("Transpose", [h], { perm: ints([0, 2, 1]) }), g.node("Shape", [x])]);
  return g.node("Add", [back, x]);
}
