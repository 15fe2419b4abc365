// unet/config.json: input channels and the latent size multiple its halvings impose.
import { expect, test } from "bun:test";
import { parseUnetConfig } from "../../../../workers/image/unet-config.ts";

test("no config: nothing known, any latent size", () => {
  expect(parseUnetConfig(null)).toEqual({ channels: null, latentMultiple: 1 });
});

test("levels set the multiple; in_channels is read", () => {
  expect(parseUnetConfig({ in_channels: 4, block_out_channels: [16, 32] })).toEqual({ channels: 4, latentMultiple: 2 });
  expect(parseUnetConfig({ block_out_channels: [320, 640, 1280, 1280] })).toEqual({ channels: null, latentMultiple: 8 });
});

test("refuses nonsense", () => {
  expect(() => parseUnetConfig({ in_channels: 0 })).toThrow("in_channels 0 is not valid");
  expect(() => parseUnetConfig({ block_out_channels: [] })).toThrow("block_out_channels");
});
