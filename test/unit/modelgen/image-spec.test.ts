// Image specs: the presets validate and have the advertised shapes, the spec hash follows every field, variants are named, bad specs are refused.
import { describe, expect, test } from "bun:test";
import {
  IMAGE_PRESETS,
  imageParamCounts,
  imageSpecHash,
  imageVariant,
  pixelMultiple,
  presetSpec,
  PRESETS,
  TINY_IMAGE_MODEL_ID,
  validateImageSpec,
  type ImageModelSpec,
} from "../../../src/modelgen/index.ts";

const tiny = IMAGE_PRESETS["tiny-image"]!;
const small = IMAGE_PRESETS["image-small"]!;

describe("image presets", () => {
  test("tiny-image and image-small have the advertised shapes and turbo defaults", () => {
    expect(tiny).toMatchObject({ id: TINY_IMAGE_MODEL_ID, displayName: "Kiln Tiny Image v1", resolution: 128, vocab: 1024, text: { hidden: 32, layers: 2 } });
    expect(tiny.unet.channels.length).toBe(2);
    expect(small).toMatchObject({ id: "kiln-image-small-v1", displayName: "Kiln Image Small v1 (random weights)", resolution: 512, vocab: 4096, text: { layers: 4 } });
    expect(small.unet).toMatchObject({ channels: [64, 128, 256], attention: [false, true, true] });
    for (const s of [tiny, small]) {
      expect(() => validateImageSpec(s)).not.toThrow();
      expect(s).toMatchObject({
        architecture: "stable-diffusion", guidanceScale: 0, scheduler: "EulerDiscreteScheduler", timestepSpacing: "trailing", predictionType: "epsilon",
        timestepType: "int64", vaeEncoderOutput: "latent_sample", steps: { low: 1, medium: 2, high: 4 }, strength: 0.6, maxBatch: 4, perImage: 0.01,
      });
    }
    expect([pixelMultiple(tiny), pixelMultiple(small)]).toEqual([16, 32]);
  });

  test("presetSpec finds text and image presets alike; the text presets are untouched", () => {
    expect(presetSpec("tiny-image")).toBe(tiny);
    expect(presetSpec("tiny")).toBe(PRESETS.tiny!);
    expect(presetSpec("toString")).toBeUndefined();
    expect(Object.keys(PRESETS)).not.toContain("tiny-image");
  });

  test("the tiny model stays small; image-small is benchmark-sized", () => {
    const t = imageParamCounts(tiny);
    const total = Object.values(t).reduce((a, b) => a + b, 0);
    expect(total).toBeLessThan(1_000_000);
    const s = imageParamCounts(small);
    expect(s.unet).toBeGreaterThan(5_000_000);
    expect(s.vae_decoder).toBeLessThan(s.unet!);
  });
});

describe("imageSpecHash", () => {
  test("ignores key order and changes with every field", () => {
    const reordered = Object.fromEntries(Object.entries(tiny).reverse()) as ImageModelSpec;
    expect(imageSpecHash(reordered)).toBe(imageSpecHash(tiny));
    const changes: Partial<ImageModelSpec>[] = [
      { seed: 2 }, { resolution: 160 }, { vocab: 1100 }, { text: { ...tiny.text, layers: 3 } }, { unet: { ...tiny.unet, heads: 4 } },
      { vae: { ...tiny.vae, groups: 8 } }, { scheduler: "EulerAncestralDiscreteScheduler" }, { predictionType: "v_prediction" },
      { timestepSpacing: "leading" }, { timestepType: "float32" }, { vaeEncoderOutput: "latent_parameters" }, { tokenizerJson: true },
      { guidanceScale: 1 }, { strength: 0.5 }, { steps: { low: 1, medium: 3, high: 4 } }, { aspectRatios: ["1:1"] }, { maxBatch: 2 },
      { perImage: 0.02 }, { initGain: 0.9 }, { embedStd: 0.5 }, { displayName: "x" }, { id: "kiln-other-image-v1" },
    ];
    const hashes = new Set([imageSpecHash(tiny), ...changes.map((c) => imageSpecHash({ ...tiny, ...c }))]);
    expect(hashes.size).toBe(changes.length + 1);
  });
});

describe("imageVariant", () => {
  test("names a variant after the options it changes and keeps everything else", () => {
    const v = imageVariant(tiny, { timestepType: "float32", vaeEncoderOutput: "latent_parameters", scheduler: "EulerAncestralDiscreteScheduler", tokenizerJson: true });
    expect(v.id).toBe("kiln-tiny-image-v1-ts-float32-latent-params-ancestral-tokjson");
    expect(v).toMatchObject({ timestepType: "float32", vaeEncoderOutput: "latent_parameters", scheduler: "EulerAncestralDiscreteScheduler", tokenizerJson: true, unet: tiny.unet });
    expect(() => validateImageSpec(v)).not.toThrow();
    expect(imageVariant(tiny, { timestepType: "int64" })).toEqual(tiny);
  });
});

describe("validateImageSpec", () => {
  test("refuses shapes the graphs cannot be built with", () => {
    const bad: [Partial<ImageModelSpec>, string][] = [
      [{ id: "Tiny Image" }, "lowercase"],
      [{ resolution: 120 }, "multiple of 16"],
      [{ text: { ...tiny.text, heads: 3 } }, "spec.text.hidden must be a multiple"],
      [{ unet: { ...tiny.unet, groups: 12 } }, "spec.unet.groups"],
      [{ unet: { ...tiny.unet, attention: [true] } }, "one entry per level"],
      [{ unet: { ...tiny.unet, channels: [15, 32] } }, "spec.unet.groups"],
      [{ vae: { ...tiny.vae, channels: [8, 8, 16] as never } }, "4 levels"],
      [{ vocab: 300 }, "at least 600"],
      [{ timestepType: "int32" as never }, "timestepType"],
      [{ strength: 0 }, "strength"],
      [{ steps: { low: 4, medium: 2, high: 1 } }, "must not decrease"],
      [{ aspectRatios: ["wide"] }, "aspectRatios"],
      [{ seed: -1 }, "seed"],
    ];
    for (const [change, message] of bad) expect(() => validateImageSpec({ ...tiny, ...change })).toThrow(message);
  });
});
