// The vision encoder (ViT + LLaVA projector) and the audio encoder (Whisper-style + stacking + projector) as ONNX graphs.
import { audioWeights, visionWeights, type Projector } from "./encoder-weights.ts";
import { encoderLayer, gelu, layerNorm, linearOp, type LinearOp } from "./graph-ops.ts";
import { imageTokens } from "./media-spec.ts";
import { GraphBuilder, int, ints, T } from "./onnx-builder.ts";
import type { Dtype, ModelSpec } from "./spec.ts";

/** Whisper's sinusoid timescales: half the channels get sines, half cosines, over 10000^(−i/(half−1)). */
export function sinusoidTimescales(channels: number): Float32Array {
  const half = channels / 2;
  const step = Math.log(10000) / (half - 1);
  return Float32Array.from({ length: half }, (_, i) => Math.exp(-step * i));
}

const project = (g: GraphBuilder, linear: LinearOp, x: string, p: Projector, output: string) =>
  linear(gelu(g, linear(x, p.linear1, p.linear1.bias)), p.linear2, p.linear2.bias, output);

/** `pixel_values` [B, 3, S, S] → `image_features` [B, (S/P)², text hidden]: one row per patch, no CLS token. */
export function visionEncoderGraph(spec: ModelSpec, dtype: Dtype): GraphBuilder {
  const v = spec.vision;
  if (!v) throw new Error("visionEncoderGraph: the spec has no vision encoder");
  const g = new GraphBuilder();
  const linear = linearOp(g, dtype);
  const { names } = visionWeights(v, spec.hidden);
  const S = v.imageSize, P = v.patchSize, N = imageTokens(v);
  const pixels = g.input("pixel_values", T.FLOAT, ["batch_size", 3, S, S]);
  // A P×P convolution with stride P is the patch embedding: [B, hidden, S/P, S/P] → [B, N, hidden] in row-major patch order.
  const patches = g.node("Conv", [pixels, names.patch], { kernel_shape: ints([P, P]), strides: ints([P, P]) });
  const seq = g.node("Transpose", [g.node("Reshape", [patches, g.int64([0, v.hidden, N])])], { perm: ints([0, 2, 1]) });
  let x = layerNorm(g, g.node("Add", [seq, names.positions]), names.preNorm, v.layerNormEps);
  for (const l of names.layers) x = encoderLayer(g, linear, x, l, v.heads, v.layerNormEps);
  project(g, linear, x, names.projector, "image_features");
  g.output("image_features", T.FLOAT, ["batch_size", N, spec.hidden]);
  return g;
}

/**
 * `audio_values` [B, n_mels, frames] → `audio_features` [B, 1 + ceil(ceil(frames/2) / K), text hidden]: two convs
 * (the second halves the frames), sinusoidal positions, encoder layers, K frames stacked per row (zero-padded to a
 * multiple of K), the projector, then the learned end-of-audio row.
 */
export function audioEncoderGraph(spec: ModelSpec, dtype: Dtype): GraphBuilder {
  const a = spec.audio;
  if (!a) throw new Error("audioEncoderGraph: the spec has no audio encoder");
  const g = new GraphBuilder();
  const linear = linearOp(g, dtype);
  const { names } = audioWeights(a, spec.hidden);
  const K = a.stackFactor;
  const mels = g.input("audio_values", T.FLOAT, ["batch_size", a.nMels, "num_frames"]);
  const conv = (x: string, w: { weight: string; bias: string }, stride: number) =>
    gelu(g, g.node("Conv", [x, w.weight, w.bias], { kernel_shape: ints([3]), pads: ints([1, 1]), strides: ints([stride]) }));
  const frames = g.node("Transpose", [conv(conv(mels, names.conv1, 1), names.conv2, 2)], { perm: ints([0, 2, 1]) });

  // Positions for however many frames arrived: [T, 1] · [1, hidden/2] → sin ‖ cos.
  const scalar = (x: string) => g.node("Squeeze", [x, g.int64([0])]);
  const count = scalar(g.node("Slice", [g.node("Shape", [frames]), g.int64([1]), g.int64([2])]));
  const steps = g.node("Cast", [g.node("Range", [g.int64([0], []), count, g.int64([1], [])])], { to: int(T.FLOAT) });
  const scales = sinusoidTimescales(a.hidden);
  const angles = g.node("Mul", [g.node("Unsqueeze", [steps, g.int64([1])]), g.float32(scales, [1, scales.length])]);
  const table = g.node("Concat", [g.node("Sin", [angles]), g.node("Cos", [angles])], { axis: int(1) });
  let x = g.node("Add", [frames, table]);
  for (const l of names.layers) x = encoderLayer(g, linear, x, l, a.heads, a.layerNormEps);
  x = layerNorm(g, x, names.finalNorm, a.layerNormEps);

  // Stack K consecutive frames into one row of K·hidden, padding the last group with zero frames.
  const k = g.int64([K], []);
  const rows = g.node("Div", [g.node("Add", [count, g.int64([K - 1], [])]), k]);
  const pad = g.node("Sub", [g.node("Mul", [rows, k]), count]);
  const pads = g.node("Concat", [g.int64([0, 0, 0, 0]), g.node("Unsqueeze", [pad, g.int64([0])]), g.int64([0])], { axis: int(0) });
  const stacked = g.node("Reshape", [g.node("Pad", [x, pads]), g.int64([0, -1, K * a.hidden])]);
  const projected = project(g, linear, stacked, names.projector, "/projected");

  const batch = g.node("Slice", [g.node("Shape", [projected]), g.int64([0]), g.int64([1])]);
  const endRows = g.node("Expand", [names.endRow, g.node("Concat", [batch, g.int64([1, spec.hidden])], { axis: int(0) })]);
  g.node("Concat", [projected, endRows], { axis: int(1) }, { output: "audio_features" });
  g.output("audio_features", T.FLOAT, ["batch_size", "num_audio_tokens", spec.hidden]);
  return g;
}
