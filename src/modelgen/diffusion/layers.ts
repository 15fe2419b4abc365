// Graph layers the diffusion graphs share: linear, SiLU, GroupNorm (as PyTorch exports it), 2-D convolutions, ×2 resampling.
import { float, GraphBuilder, ints } from "../onnx-builder.ts";
import type { ConvParams, LinearParams, ParamStore } from "./params.ts";

/** A graph under construction and the store its weights come from. */
export interface Net {
  g: GraphBuilder;
  p: ParamStore;
}

export function linear(n: Net, x: string, w: LinearParams, output?: string): string {
  const y = n.g.node("MatMul", [x, w.weight], {}, { output: w.bias ? undefined : output });
  return w.bias ? n.g.node("Add", [y, w.bias], {}, { output }) : y;
}

export function silu(n: Net, x: string): string {
  return n.g.node("Mul", [x, n.g.node("Sigmoid", [x])]);
}

/**
 * GroupNorm over [B, C, H, W] as PyTorch exports it: Reshape to [B, groups, −1], InstanceNormalization, Reshape back,
 * then the per-channel affine. (Measured faster here than ONNX GroupNormalization on ONNX Runtime's CPU provider.)
 */
export function groupNorm(n: Net, x: string, prefix: string, channels: number, groups: number, eps: number): string {
  const { g, p } = n;
  const weight = p.filled(`${prefix}.weight`, [channels, 1, 1], 1);
  const bias = p.filled(`${prefix}.bias`, [channels, 1, 1], 0);
  const grouped = g.node("Reshape", [x, g.int64([0, groups, -1])]);
  const normed = g.node("InstanceNormalization", [grouped, g.float32(new Array(groups).fill(1)), g.float32(new Array(groups).fill(0))], { epsilon: float(eps) });
  const back = g.node("Reshape", [normed, g.node("Shape", [x])]);
  return g.node("Add", [g.node("Mul", [back, weight]), bias]);
}

/** A k×k convolution; `pads` as ONNX orders them (top, left, bottom, right), "same" padding by default. */
export function conv(n: Net, x: string, w: ConvParams, kernel: number, opts: { stride?: number; pads?: number[]; output?: string } = {}): string {
  const half = (kernel - 1) / 2;
  const attrs = { kernel_shape: ints([kernel, kernel]), strides: ints([opts.stride ?? 1, opts.stride ?? 1]), pads: ints(opts.pads ?? [half, half, half, half]) };
  return n.g.node("Conv", [x, w.weight, w.bias], attrs, { output: opts.output });
}

/** Halves H and W with a stride-2 3×3 conv; diffusers' UNet pads all sides, its VAE only bottom and right. */
export function downsample(n: Net, x: string, prefix: string, channels: number, pads: number[]): string {
  return conv(n, x, n.p.conv(`${prefix}.conv`, channels, channels, 3), 3, { stride: 2, pads });
}

/** Doubles H and W: nearest-neighbour Resize (each pixel repeated 2×2), then a 3×3 conv. */
export function upsample(n: Net, x: string, prefix: string, channels: number): string {
  // Resize's defaults (nearest, half_pixel, round_prefer_floor) pick source pixel ⌊i/2⌋ at an exact ×2 scale.
  const up = n.g.node("Resize", [x, "", n.g.float32([1, 1, 2, 2])]);
  return conv(n, up, n.p.conv(`${prefix}.conv`, channels, channels, 3), 3);
}

/**
 * diffusers' ResnetBlock2D: GroupNorm, SiLU, 3×3 conv, (+ the time embedding's projection), GroupNorm, SiLU, 3×3 conv,
 * added to the input (through a 1×1 conv when the channels change).
 */
export function resnet(
  n: Net,
  x: string,
  prefix: string,
  inputs: number,
  outputs: number,
  norm: { groups: number; eps: number },
  /** SiLU of the time embedding [T, dim] (T = 1 or batch), projected per block: the UNet's; the VAE has none. */
  time?: { act: string; dim: number },
): string {
  let h = conv(n, silu(n, groupNorm(n, x, `${prefix}.norm1`, inputs, norm.groups, norm.eps)), n.p.conv(`${prefix}.conv1`, inputs, outputs, 3), 3);
  if (time) {
    const t = linear(n, time.act, n.p.linear(`${prefix}.time_emb_proj`, time.dim, outputs));
    h = n.g.node("Add", [h, n.g.node("Unsqueeze", [t, n.g.int64([2, 3])])]);
  }
  h = conv(n, silu(n, groupNorm(n, h, `${prefix}.norm2`, outputs, norm.groups, norm.eps)), n.p.conv(`${prefix}.conv2`, outputs, outputs, 3), 3);
  const shortcut = inputs === outputs ? x : conv(n, x, n.p.conv(`${prefix}.conv_shortcut`, inputs, outputs, 1), 1);
  return n.g.node("Add", [shortcut, h]);
}
