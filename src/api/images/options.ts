// What an images request asks for, checked against its model: the image model itself, the size (reduced to one of
// the model's aspect ratios), steps for the quality, the output format and its compression, the seed. Pure; every
// refusal is a 400 naming its field.
import { ApiError, clip } from "../../errors/api-error.ts";
import type { OutputFormat } from "../../images/encode.ts";
import type { Quality } from "../../models/diffusion-layout.ts";
import { type ImageSize, nearestSize, parseSizeParam } from "../../models/image-sizes.ts";
import type { ModelEntry } from "../../models/registry.ts";
import type { GenerationBody } from "./schema.ts";

export interface ImageOptions {
  n: number;
  /** The size asked for (null: auto), to be reduced to one of the model's by `sizeFor`. */
  want: { width: number; height: number } | null;
  quality: Quality;
  steps: number;
  format: OutputFormat;
  /** jpeg and webp quality; null: the default. */
  compression: number | null;
  /** The first image's seed; null: a random one. */
  seed: number | null;
}

/** The fields generations and edits share (an edit's images and mask aside). */
export type CommonFields = Omit<GenerationBody, "model" | "prompt">;

/** The image model a request names: 404 model_not_found when unknown, 400 when it does not make images. */
export function imageModel(registry: { get(id: string): ModelEntry | undefined }, id: string, edit: boolean): ModelEntry {
  const model = registry.get(id);
  if (!model) throw ApiError.modelNotFound(id);
  if (!model.diffusion) throw ApiError.badRequest(`The model '${model.id}' does not generate images; use an image model (GET /v1/models lists each model's capabilities).`, "model");
  if (edit && !model.diffusion.edits) throw ApiError.badRequest(`The model '${model.id}' cannot edit images: its folder has no VAE encoder.`, "model");
  return model;
}

/** The API's quality names onto the model's three: standard is medium, hd is high, auto is medium. */
function qualityOf(q: CommonFields["quality"]): Quality {
  if (q === "low" || q === "high") return q;
  return q === "hd" ? "high" : "medium";
}

/** The request's options for `model`, checked before any image is read or any work queued. */
export function imageOptions(body: CommonFields, model: ModelEntry): ImageOptions {
  const layout = model.diffusion!;
  if (body.response_format === "url") {
    throw ApiError.badRequest("response_format url is not supported: kiln returns each image inline as b64_json.", "response_format");
  }
  if (body.background === "transparent") {
    throw ApiError.badRequest(`The model '${model.id}' makes opaque images only; use background auto or opaque.`, "background");
  }
  const format = body.output_format ?? "png";
  if (format === "png" && body.output_compression !== undefined && body.output_compression !== null) {
    throw ApiError.badRequest("output_compression applies to jpeg and webp output; png is lossless.", "output_compression");
  }
  let want: { width: number; height: number } | null = null;
  if (body.size !== undefined && body.size !== null && body.size !== "auto") {
    const parsed = parseSizeParam(body.size);
    if (!parsed) throw ApiError.badRequest(`Invalid value for 'size': '${clip(body.size)}'. Use <width>x<height> (for example 1024x1024) or auto.`, "size");
    want = parsed;
  }
  const quality = qualityOf(body.quality);
  return {
    n: body.n ?? 1,
    want,
    quality,
    steps: layout.steps[quality],
    format,
    compression: body.output_compression ?? null,
    seed: body.seed ?? null,
  };
}

/**
 * The model's size nearest to what was asked; auto takes the model's first size for a generation and, for an edit,
 * the ratio of its images side by side (`natural`).
 */
export function sizeFor(model: ModelEntry, want: ImageOptions["want"], natural: number | null = null): ImageSize {
  return nearestSize(model.diffusion!.sizes, want ?? (natural === null ? null : { width: natural, height: 1 }));
}

/** The seed of image i of a request whose first seed is `first` (uint32, wrapping). */
export function seedOf(first: number, i: number): number {
  return (first + i) >>> 0;
}
