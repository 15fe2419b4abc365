// vae_decoder/model.onnx and vae_encoder/model.onnx: AutoencoderKL's halves (ResNets, three ×2 resamplings, no attention).
import { T } from "../onnx-builder.ts";
import type { ImageModelSpec } from "./image-spec.ts";
import { conv, downsample, groupNorm, resnet, silu, upsample, type Net } from "./layers.ts";
import { LATENT_CHANNELS } from "./unet-graph.ts";

const IMAGE_CHANNELS = 3;
const VAE_EPS = 1e-6;

/**
 * `latent_sample` [batch_size, 4, latent_height, latent_width] → `sample` [batch_size, 3, 8·latent_height, 8·latent_width]:
 * post_quant_conv, conv_in, two mid ResNets, four up levels (channels reversed, one more ResNet than layers_per_block,
 * ×2 upsampling after all but the last), GroupNorm, SiLU, conv_out. The final GroupNorm keeps outputs O(1) however
 * large the latents are (the pipeline divides them by the scaling factor first).
 */
export function vaeDecoderGraph(n: Net, spec: ImageModelSpec): void {
  const { g, p } = n;
  const v = spec.vae;
  const norm = { groups: v.groups, eps: VAE_EPS };
  const latent = g.input("latent_sample", T.FLOAT, ["batch_size", LATENT_CHANNELS, "latent_height", "latent_width"]);
  const reversed = [...v.channels].reverse();
  let ch = reversed[0]!;
  let h = conv(n, latent, p.conv("post_quant_conv", LATENT_CHANNELS, LATENT_CHANNELS, 1), 1);
  h = conv(n, h, p.conv("decoder.conv_in", LATENT_CHANNELS, ch, 3), 3);
  h = resnet(n, h, "decoder.mid_block.resnets.0", ch, ch, norm);
  h = resnet(n, h, "decoder.mid_block.resnets.1", ch, ch, norm);
  reversed.forEach((out, r) => {
    for (let j = 0; j <= v.layersPerBlock; j++) {
      h = resnet(n, h, `decoder.up_blocks.${r}.resnets.${j}`, ch, out, norm);
      ch = out;
    }
    if (r < reversed.length - 1) h = upsample(n, h, `decoder.up_blocks.${r}.upsamplers.0`, ch);
  });
  const act = silu(n, groupNorm(n, h, "decoder.conv_norm_out", ch, v.groups, VAE_EPS));
  conv(n, act, p.conv("decoder.conv_out", ch, IMAGE_CHANNELS, 3), 3, { output: "sample" });
  g.output("sample", T.FLOAT, ["batch_size", IMAGE_CHANNELS, "height", "width"]);
}

/**
 * `sample` [batch_size, 3, height, width] → the latent distribution at 1/8 size: conv_in, four down levels (stride-2
 * convs padded bottom and right after all but the last), two mid ResNets, GroupNorm, SiLU, conv_out to mean ‖
 * log-variance, quant_conv. Output `latent_parameters` (all 8 channels) or `latent_sample` (the mean: deterministic,
 * no random op in the graph).
 */
export function vaeEncoderGraph(n: Net, spec: ImageModelSpec): void {
  const { g, p } = n;
  const v = spec.vae;
  const norm = { groups: v.groups, eps: VAE_EPS };
  const image = g.input("sample", T.FLOAT, ["batch_size", IMAGE_CHANNELS, "height", "width"]);
  let ch = v.channels[0];
  let h = conv(n, image, p.conv("encoder.conv_in", IMAGE_CHANNELS, ch, 3), 3);
  v.channels.forEach((out, i) => {
    for (let j = 0; j < v.layersPerBlock; j++) {
      h = resnet(n, h, `encoder.down_blocks.${i}.resnets.${j}`, ch, out, norm);
      ch = out;
    }
    if (i < v.channels.length - 1) h = downsample(n, h, `encoder.down_blocks.${i}.downsamplers.0`, ch, [0, 0, 1, 1]);
  });
  h = resnet(n, h, "encoder.mid_block.resnets.0", ch, ch, norm);
  h = resnet(n, h, "encoder.mid_block.resnets.1", ch, ch, norm);
  const act = silu(n, groupNorm(n, h, "encoder.conv_norm_out", ch, v.groups, VAE_EPS));
  const moments = conv(n, act, p.conv("encoder.conv_out", ch, 2 * LATENT_CHANNELS, 3), 3);
  const name = spec.vaeEncoderOutput;
  const params = conv(n, moments, p.conv("quant_conv", 2 * LATENT_CHANNELS, 2 * LATENT_CHANNELS, 1), 1, name === "latent_parameters" ? { output: name } : {});
  if (name === "latent_sample") g.node("Slice", [params, g.int64([0]), g.int64([LATENT_CHANNELS]), g.int64([1])], {}, { output: name });
  const channels = name === "latent_parameters" ? 2 * LATENT_CHANNELS : LATENT_CHANNELS;
  g.output(name, T.FLOAT, ["batch_size", channels, "latent_height", "latent_width"]);
}
