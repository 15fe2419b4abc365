// Runs the VAE: the decoder turns latents into [-1, 1] images, the encoder turns an edit's init image into latents.
import type { GraphSession, VaeIO } from "./graph-io.ts";
import { runInChunks, stack, unstack } from "./graph-batch.ts";
import { floatsOf, floatTensor } from "./ort-values.ts";
import type { LatentShape } from "./denoiser.ts";
import { fromVaeSpace, toVaeSpace, type VaeSpec } from "./vae-config.ts";

export interface VaeGraph {
  session: GraphSession;
  io: VaeIO;
}

/** Why a VAE graph cannot take an input of this spatial size (fixed dims), or null. */
export function vaeSizeProblem(io: VaeIO, height: number, width: number, what: string): string | null {
  if ((io.height !== null && io.height !== height) || (io.width !== null && io.width !== width)) {
    return `the ${what} only runs ${io.width ?? width}×${io.height ?? height} inputs (asked for ${width}×${height})`;
  }
  return null;
}

/** Decodes latents (one array per image, all of `shape`) into [3, H, W] images in about [-1, 1]. */
export function decodeLatents(decoder: VaeGraph, vae: VaeSpec, latents: Float32Array[], shape: LatentShape): Promise<Float32Array[]> {
  return runInChunks(latents, decoder.io.batch, async (chunk) => {
    const z = stack(chunk.map((l) => toVaeSpace(l, vae)));
    const out = await decoder.session.run({ latent_sample: floatTensor(z, decoder.io.inType, [chunk.length, shape.channels, shape.height, shape.width]) }, ["sample"]);
    if (!out.sample) throw new Error("vae_decoder returned no sample");
    return unstack(floatsOf(out.sample), chunk.length);
  });
}

/** Encodes [3, H, W] images in [-1, 1] into scaled latents ([channels, H/scale, W/scale] each). */
export function encodeImages(encoder: VaeGraph, vae: VaeSpec, images: Float32Array[], width: number, height: number): Promise<Float32Array[]> {
  const name = encoder.io.output;
  return runInChunks(images, encoder.io.batch, async (chunk) => {
    const out = await encoder.session.run({ sample: floatTensor(stack(chunk), encoder.io.inType, [chunk.length, 3, height, width]) }, [name]);
    const value = out[name];
    if (!value || value.dims.length !== 4) throw new Error(`vae_encoder returned no [batch, channels, h, w] ${name}`);
    const channels = value.dims[1]!;
    const plane = value.dims[2]! * value.dims[3]!;
    // latent_parameters stacks mean and log-variance along channels: the mean is the first half.
    const keep = name === "latent_parameters" ? channels / 2 : channels;
    if (keep !== vae.channels) throw new Error(`vae_encoder's ${name} has ${channels} channels; expected ${name === "latent_parameters" ? 2 * vae.channels : vae.channels}`);
    return unstack(floatsOf(value), chunk.length).map((row) => fromVaeSpace(row.subarray(0, keep * plane), vae));
  });
}
