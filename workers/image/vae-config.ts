// Parses vae_decoder/config.json: latent scaling (and shift), latent channels and the VAE's spatial scale.

export interface VaeSpec {
  /** Latents are the VAE's z times this (SD 1.x/2.x: 0.18215). */
  scaling: number;
  /** Subtracted from z before scaling (SD3-style VAEs); 0 when the config has none. */
  shift: number;
  channels: number;
  /** Pixels per latent cell along each side: 2^(blocks − 1). */
  scale: number;
}

export function parseVaeConfig(config: Record<string, unknown>): VaeSpec {
  const scaling = config.scaling_factor ?? 0.18215;
  if (typeof scaling !== "number" || !(scaling > 0) || !Number.isFinite(scaling)) throw new Error(`vae config: scaling_factor ${JSON.stringify(scaling)} is not valid`);
  const shift = config.shift_factor ?? 0;
  if (typeof shift !== "number" || !Number.isFinite(shift)) throw new Error(`vae config: shift_factor ${JSON.stringify(shift)} is not valid`);
  const channels = config.latent_channels ?? 4;
  if (!Number.isInteger(channels) || (channels as number) < 1) throw new Error(`vae config: latent_channels ${JSON.stringify(channels)} is not valid`);
  const blocks = config.block_out_channels;
  let scale = 8;
  if (blocks !== undefined && blocks !== null) {
    if (!Array.isArray(blocks) || blocks.length < 1) throw new Error("vae config: block_out_channels is not a non-empty list");
    scale = 2 ** (blocks.length - 1);
  }
  return { scaling, shift, channels: channels as number, scale };
}

/** z the decoder takes from latents: latents/scaling + shift. */
export function toVaeSpace(latents: Float32Array, vae: VaeSpec): Float32Array {
  const out = new Float32Array(latents.length);
  for (let i = 0; i < latents.length; i++) out[i] = latents[i]! / vae.scaling + vae.shift;
  return out;
}

/** Latents from the encoder's z: (z − shift)·scaling. */
export function fromVaeSpace(z: ArrayLike<number>, vae: VaeSpec): Float32Array {
  const out = new Float32Array(z.length);
  for (let i = 0; i < z.length; i++) out[i] = (z[i]! - vae.shift) * vae.scaling;
  return out;
}
