// What an images request asks for, checked against its model: every refusal a 400 naming its field.
import { describe, expect, test } from "bun:test";
import { imageModel, imageOptions, seedOf, sizeFor } from "../../../src/api/images/options.ts";
import { parseDiffusionLayout } from "../../../src/models/diffusion-layout.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import { apiRefusalOf } from "../../helpers/api-refusal.ts";

const diffusion = parseDiffusionLayout({ resolution: 128, aspect_ratios: ["1:1", "2:1", "1:2"], steps: { low: 1, medium: 2, high: 4 } }, { vaeScale: 8, unetScale: 2, nativeResolution: 128, textLength: 77, edits: false });
const model = { id: "img-v1", diffusion } as unknown as ModelEntry;
const text = { id: "text-v1", diffusion: null } as unknown as ModelEntry;
const registry = { get: (id: string) => ({ "img-v1": model, "text-v1": text })[id] };

describe("image request options", () => {
  test("the model: unknown is 404 model_not_found, a text model 400 on model, an edit on a model without a VAE encoder 400", () => {
    expect(apiRefusalOf(() => imageModel(registry, "nope-v1", false))).toMatchObject({ status: 404, code: "model_not_found", param: "model" });
    expect(apiRefusalOf(() => imageModel(registry, "text-v1", false))).toMatchObject({ status: 400, param: "model" });
    expect(imageModel(registry, "img-v1", false)).toBe(model);
    expect(apiRefusalOf(() => imageModel(registry, "img-v1", true))).toMatchObject({ status: 400, param: "model", message: expect.stringContaining("no VAE encoder") });
  });

  test("defaults: one png at the first size, medium quality's steps, a random seed", () => {
    const o = imageOptions({}, model);
    expect(o).toEqual({ n: 1, want: null, quality: "medium", steps: 2, format: "png", compression: null, seed: null });
    expect(sizeFor(model, o.want)).toEqual({ ratio: "1:1", width: 128, height: 128 });
  });

  test("quality names map onto the model's steps; sizes onto its nearest ratio; an unsized edit keeps its images' ratio", () => {
    expect(imageOptions({ quality: "low" }, model).steps).toBe(1);
    expect(imageOptions({ quality: "hd" }, model).steps).toBe(4);
    expect(imageOptions({ quality: "standard" }, model).steps).toBe(2);
    expect(sizeFor(model, imageOptions({ size: "1024x512" }, model).want)).toMatchObject({ ratio: "2:1" });
    expect(sizeFor(model, imageOptions({ size: "auto" }, model).want, 0.5)).toMatchObject({ ratio: "1:2" });
    expect(sizeFor(model, imageOptions({ size: "512x1024" }, model).want, 2)).toMatchObject({ ratio: "1:2" });
  });

  test("refusals: a url answer, a transparent background, compression on png, a malformed size", () => {
    expect(apiRefusalOf(() => imageOptions({ response_format: "url" }, model))).toMatchObject({ status: 400, param: "response_format" });
    expect(apiRefusalOf(() => imageOptions({ background: "transparent" }, model))).toMatchObject({ status: 400, param: "background" });
    expect(apiRefusalOf(() => imageOptions({ output_compression: 50 }, model))).toMatchObject({ status: 400, param: "output_compression" });
    expect(imageOptions({ output_format: "webp", output_compression: 50 }, model)).toMatchObject({ format: "webp", compression: 50 });
    expect(apiRefusalOf(() => imageOptions({ size: "big" }, model))).toMatchObject({ status: 400, param: "size" });
  });

  test("image i's seed follows the first, wrapping at 2^32", () => {
    expect([seedOf(7, 0), seedOf(7, 2), seedOf(4_294_967_295, 1)]).toEqual([7, 9, 0]);
  });
});
