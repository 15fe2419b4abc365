// vae_decoder/config.json parsing, and the scaling between latents and the VAE's own space.
import { describe, expect, test } from "bun:test";
import { fromVaeSpace, parseVaeConfig, toVaeSpace } from "../../../../workers/image/vae-config.ts";

describe("parseVaeConfig", () => {
  test("defaults: SD's scaling, no shift, 4 channels, scale 8", () => {
    expect(parseVaeConfig({})).toEqual({ scaling: 0.18215, shift: 0, channels: 4, scale: 8 });
  });

  test("block_out_channels gives the scale; shift_factor null means none", () => {
    expect(parseVaeConfig({ scaling_factor: 0.5, shift_factor: null, block_out_channels: [8, 16] })).toEqual({ scaling: 0.5, shift: 0, channels: 4, scale: 2 });
    expect(parseVaeConfig({ block_out_channels: [128, 256, 512, 512], shift_factor: 0.1159, latent_channels: 16 }).scale).toBe(8);
  });

  test("refuses nonsense", () => {
    expect(() => parseVaeConfig({ scaling_factor: 0 })).toThrow("scaling_factor 0 is not valid");
    expect(() => parseVaeConfig({ shift_factor: "x" })).toThrow('shift_factor "x" is not valid');
    expect(() => parseVaeConfig({ block_out_channels: [] })).toThrow("block_out_channels");
    expect(() => parseVaeConfig({ latent_channels: 0 })).toThrow("latent_channels 0 is not valid");
  });
});

describe("latent scaling", () => {
  const vae = { scaling: 0.5, shift: 0.25, channels: 4, scale: 8 };
  test("decode takes latents/scaling + shift; encode gives (z − shift)·scaling; they invert", () => {
    const z = toVaeSpace(Float32Array.of(1, -2), vae);
    expect(Array.from(z)).toEqual([2.25, -3.75]);
    expect(Array.from(fromVaeSpace(z, vae))).toEqual([1, -2]);
  });
});
