// Parses unet/config.json (optional): the latent channels it takes and how many times it halves the latents, which
// sets the size multiple (skip connections only line up when every halving is exact).

export interface UnetSpec {
  /** in_channels when the config gives it. */
  channels: number | null;
  /** Latent sides must divide by this: 2^(levels − 1). */
  latentMultiple: number;
}

export function parseUnetConfig(config: Record<string, unknown> | null): UnetSpec {
  if (!config) return { channels: null, latentMultiple: 1 };
  const channels = config.in_channels ?? null;
  if (channels !== null && (!Number.isInteger(channels) || (channels as number) < 1)) throw new Error(`unet config: in_channels ${JSON.stringify(channels)} is not valid`);
  const blocks = config.block_out_channels;
  let latentMultiple = 1;
  if (blocks !== undefined && blocks !== null) {
    if (!Array.isArray(blocks) || blocks.length < 1) throw new Error("unet config: block_out_channels is not a non-empty list");
    latentMultiple = 2 ** (blocks.length - 1);
  }
  return { channels: channels as number | null, latentMultiple };
}
