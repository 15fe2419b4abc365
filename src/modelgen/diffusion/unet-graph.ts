// unet/model.onnx: a small UNet2DConditionModel, `sample`, `timestep`, `encoder_hidden_states` → `out_sample`.
import { int, T } from "../onnx-builder.ts";
import { spatialTransformer } from "./attention.ts";
import type { ImageModelSpec } from "./image-spec.ts";
import { conv, downsample, groupNorm, linear, resnet, silu, upsample, type Net } from "./layers.ts";

export const LATENT_CHANNELS = 4;

/** diffusers' Timesteps(flip_sin_to_cos=True, freq_shift=0): frequencies 10000^(−i/half) for i < half = channels/2. */
export function timestepFrequencies(channels: number): Float32Array {
  const half = channels / 2;
  return Float32Array.from({ length: half }, (_, i) => Math.exp((-Math.log(10000) * i) / half));
}

/**
 * The timestep's embedding [T, 4·C₀] after its SiLU, shared by every ResNet's projection: sinusoids (cosines first) →
 * linear → SiLU → linear → SiLU. T is 1 (broadcast to every row) or the batch size (one timestep per row).
 */
function timeEmbedding(n: Net, timestep: string, spec: ImageModelSpec): { act: string; dim: number } {
  const { g, p } = n;
  const c0 = spec.unet.channels[0]!;
  const dim = 4 * c0;
  const t = spec.timestepType === "int64" ? g.node("Cast", [timestep], { to: int(T.FLOAT) }) : timestep;
  const freqs = timestepFrequencies(c0);
  const args = g.node("Mul", [g.node("Unsqueeze", [t, g.int64([1])]), g.float32(freqs, [1, freqs.length])]);
  const sinusoids = g.node("Concat", [g.node("Cos", [args]), g.node("Sin", [args])], { axis: int(1) });
  const hidden = silu(n, linear(n, sinusoids, p.linear("time_embedding.linear_1", c0, dim)));
  return { act: silu(n, linear(n, hidden, p.linear("time_embedding.linear_2", dim, dim))), dim };
}

/**
 * The UNet: conv_in; down levels of ResNets (each followed by a spatial transformer on attention levels), a stride-2
 * conv after every level but the last; a mid block (ResNet, transformer, ResNet); up levels of one more ResNet each,
 * every one fed the matching skip concatenated on the channel axis, nearest ×2 upsampling after every level but the
 * last; GroupNorm, SiLU, conv_out. Height and width must divide by 2^(levels − 1).
 */
export function unetGraph(n: Net, spec: ImageModelSpec): void {
  const { g, p } = n;
  const u = spec.unet;
  const levels = u.channels.length;
  const sample = g.input("sample", T.FLOAT, ["batch_size", LATENT_CHANNELS, "height", "width"]);
  const timestep = g.input("timestep", spec.timestepType === "int64" ? T.INT64 : T.FLOAT, ["steps"]);
  const states = g.input("encoder_hidden_states", T.FLOAT, ["batch_size", "sequence_length", spec.text.hidden]);
  const context = { states, dim: spec.text.hidden };
  const time = timeEmbedding(n, timestep, spec);
  const norm = { groups: u.groups, eps: 1e-5 };
  const transformer = (x: string, prefix: string, channels: number) => spatialTransformer(n, x, prefix, channels, u.heads, u.groups, context);

  let ch = u.channels[0]!;
  let h = conv(n, sample, p.conv("conv_in", LATENT_CHANNELS, ch, 3), 3);
  const skips: { x: string; ch: number }[] = [{ x: h, ch }];
  for (let i = 0; i < levels; i++) {
    const out = u.channels[i]!;
    for (let j = 0; j < u.layersPerBlock; j++) {
      h = resnet(n, h, `down_blocks.${i}.resnets.${j}`, ch, out, norm, time);
      ch = out;
      if (u.attention[i]) h = transformer(h, `down_blocks.${i}.attentions.${j}`, ch);
      skips.push({ x: h, ch });
    }
    if (i < levels - 1) {
      h = downsample(n, h, `down_blocks.${i}.downsamplers.0`, ch, [1, 1, 1, 1]);
      skips.push({ x: h, ch });
    }
  }

  h = resnet(n, h, "mid_block.resnets.0", ch, ch, norm, time);
  h = transformer(h, "mid_block.attentions.0", ch);
  h = resnet(n, h, "mid_block.resnets.1", ch, ch, norm, time);

  for (let r = 0; r < levels; r++) {
    const level = levels - 1 - r;
    const out = u.channels[level]!;
    for (let j = 0; j <= u.layersPerBlock; j++) {
      const skip = skips.pop()!;
      h = resnet(n, g.node("Concat", [h, skip.x], { axis: int(1) }), `up_blocks.${r}.resnets.${j}`, ch + skip.ch, out, norm, time);
      ch = out;
      if (u.attention[level]) h = transformer(h, `up_blocks.${r}.attentions.${j}`, ch);
    }
    if (r < levels - 1) h = upsample(n, h, `up_blocks.${r}.upsamplers.0`, ch);
  }
  if (skips.length) throw new Error(`unetGraph: ${skips.length} skip connections left over`);

  const act = silu(n, groupNorm(n, h, "conv_norm_out", ch, u.groups, 1e-5));
  conv(n, act, p.conv("conv_out", ch, LATENT_CHANNELS, 3), 3, { output: "out_sample" });
  g.output("out_sample", T.FLOAT, ["batch_size", LATENT_CHANNELS, "height", "width"]);
}
