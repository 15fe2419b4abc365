// tiny-image's VAE halves in onnxruntime-node, and the whole turbo pipeline (prompt → 4 Euler steps → image) on random weights.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { buildImageModel, IMAGE_PRESETS, imageVariant, SCALING_FACTOR } from "../../../src/modelgen/index.ts";
import { tinyImageModelDir } from "../../helpers/tiny-model.ts";
import { checkOutput, declared, int64, maxAbsDiff, noise, openImageModel, promptIds, std, type Sessions } from "./image-ort.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-image-vae-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const tiny = IMAGE_PRESETS["tiny-image"]!;
let base: Sessions;
let params: Sessions;

beforeAll(async () => {
  base = await openImageModel(await tinyImageModelDir());
  const spec = imageVariant(tiny, { vaeEncoderOutput: "latent_parameters" });
  params = await openImageModel((await buildImageModel({ spec, outDir: join(root, spec.id) })).dir);
});

const SIZES = [[128, 128], [192, 96]] as const;

describe("vae_decoder", () => {
  test("declares latent_sample → sample", () => {
    expect(declared(base.vae_decoder.inputMetadata)).toEqual([["latent_sample", "float32", ["batch_size", 4, "latent_height", "latent_width"]]]);
    expect(declared(base.vae_decoder.outputMetadata)).toEqual([["sample", "float32", ["batch_size", 3, "height", "width"]]]);
  });

  test("decodes batch 1 and 3 at two sizes to 8× the latents, O(1) values that follow the latents", async () => {
    for (const [H, W] of SIZES) {
      for (const B of [1, 3]) {
        const latents = noise([B, 4, H / 8, W / 8], B, 1 / SCALING_FACTOR);
        const image = checkOutput((await base.vae_decoder.run({ latent_sample: latents })).sample, [B, 3, H, W], 20);
        expect(std(image)).toBeGreaterThan(0.1);
        expect(std(image)).toBeLessThan(3);
        const other = (await base.vae_decoder.run({ latent_sample: noise([B, 4, H / 8, W / 8], 9, 1 / SCALING_FACTOR) })).sample!.data as Float32Array;
        expect(maxAbsDiff(image, other)).toBeGreaterThan(0.1);
      }
    }
  });
});

describe("vae_encoder", () => {
  test("declares sample → latent_sample (the default) or latent_parameters (the variant)", () => {
    const input = [["sample", "float32", ["batch_size", 3, "height", "width"]]];
    expect(declared(base.vae_encoder.inputMetadata)).toEqual(input);
    expect(declared(params.vae_encoder.inputMetadata)).toEqual(input);
    expect(declared(base.vae_encoder.outputMetadata)).toEqual([["latent_sample", "float32", ["batch_size", 4, "latent_height", "latent_width"]]]);
    expect(declared(params.vae_encoder.outputMetadata)).toEqual([["latent_parameters", "float32", ["batch_size", 8, "latent_height", "latent_width"]]]);
  });

  test("encodes batch 1 and 3 at two sizes to 1/8; latent_sample is the deterministic mean, the first half of latent_parameters", async () => {
    for (const [H, W] of SIZES) {
      for (const B of [1, 3]) {
        const image = noise([B, 3, H, W], B, 0.5);
        const mean = checkOutput((await base.vae_encoder.run({ sample: image })).latent_sample, [B, 4, H / 8, W / 8], 20);
        expect(maxAbsDiff(mean, (await base.vae_encoder.run({ sample: image })).latent_sample!.data as Float32Array)).toBe(0);
        const both = checkOutput((await params.vae_encoder.run({ sample: image })).latent_parameters, [B, 8, H / 8, W / 8], 20);
        const plane = (H / 8) * (W / 8);
        for (let b = 0; b < B; b++) {
          const m = mean.subarray(b * 4 * plane, (b + 1) * 4 * plane);
          expect(maxAbsDiff(m, both.subarray(b * 8 * plane, b * 8 * plane + 4 * plane))).toBeLessThan(1e-5);
        }
        const other = (await base.vae_encoder.run({ sample: noise([B, 3, H, W], 5, 0.5) })).latent_sample!.data as Float32Array;
        expect(maxAbsDiff(mean, other)).toBeGreaterThan(0.01);
      }
    }
  });
});

/** Euler over sd-turbo's schedule (scaled_linear betas, trailing timesteps), epsilon prediction, no guidance. */
async function generate(s: Sessions, prompt: number[], seed: number, steps = 4): Promise<Float32Array> {
  const states = (await s.text_encoder.run({ input_ids: promptIds([prompt], 77, tiny.vocab) })).last_hidden_state!;
  let cumulative = 1;
  const sigmas = Array.from({ length: 1000 }, (_, i) => {
    const beta = (Math.sqrt(0.00085) + (i / 999) * (Math.sqrt(0.012) - Math.sqrt(0.00085))) ** 2;
    cumulative *= 1 - beta;
    return Math.sqrt((1 - cumulative) / cumulative);
  });
  const timesteps = Array.from({ length: steps }, (_, i) => Math.round(1000 - (i * 1000) / steps) - 1);
  const sigma = [...timesteps.map((t) => sigmas[t]!), 0];
  const side = tiny.resolution / 8;
  const x = noise([1, 4, side, side], seed, sigma[0]).data as Float32Array;
  for (let i = 0; i < steps; i++) {
    const input = x.map((v) => v / Math.sqrt(sigma[i]! ** 2 + 1));
    const eps = checkOutput((await s.unet.run({ sample: new ort.Tensor("float32", input, [1, 4, side, side]), timestep: int64([timesteps[i]!]), encoder_hidden_states: states })).out_sample, [1, 4, side, side], 20);
    for (let j = 0; j < x.length; j++) x[j]! += (sigma[i + 1]! - sigma[i]!) * eps[j]!;
  }
  const latents = new ort.Tensor("float32", x.map((v) => v / SCALING_FACTOR), [1, 4, side, side]);
  return checkOutput((await s.vae_decoder.run({ latent_sample: latents })).sample, [1, 3, tiny.resolution, tiny.resolution], 50);
}

describe("the pipeline on random weights", () => {
  test("prompt → text encoder → 4 UNet steps → VAE decode: finite, O(1), and it depends on the prompt and the starting noise", async () => {
    const image = await generate(base, [320, 321, 322], 1);
    expect(std(image)).toBeGreaterThan(0.1);
    expect(std(image)).toBeLessThan(5);
    expect(maxAbsDiff(image, await generate(base, [320, 321, 322], 1))).toBe(0);
    expect(maxAbsDiff(image, await generate(base, [700, 15], 1))).toBeGreaterThan(0.01);
    expect(maxAbsDiff(image, await generate(base, [320, 321, 322], 2))).toBeGreaterThan(0.1);
  });
});
