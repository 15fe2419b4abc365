// Composes an edit's images into one canvas with sharp: each auto-oriented, flattened onto a neutral grey, scaled to
// fit its grid cell (layout.ts); a mask (transparent = may change) applies to the first image's place on the canvas.
import sharp from "sharp";
import { ApiError } from "../errors/api-error.ts";
import type { DecodedImage } from "../inference/media.ts";
import { fitInside, gridLayout, latentMask, type Rect } from "./layout.ts";

/** The canvas an edit starts from. */
export interface Canvas {
  width: number;
  height: number;
  /** Packed RGB, rows top to bottom. */
  rgb: Uint8Array;
  /** Per-pixel weight of the render (1 = may change), from the mask; null when the whole canvas may change. */
  weights: Float32Array | null;
  /** Per latent cell (1 = may change), from the weights; null without a mask. */
  latentMask: Float32Array | null;
}

/** Neutral grey: 0 in the VAE's [-1, 1] range, so empty canvas reads as no content rather than black or white. */
const GREY = 128;
const BACKGROUND = { r: GREY, g: GREY, b: GREY };

/**
 * sharp as intake decoded it: refusing broken data but not the harmless warnings many real JPEGs carry (sharp's
 * default, failOn "warning", would refuse here what intake accepted).
 */
const open = (bytes: Uint8Array) => sharp(bytes, { limitInputPixels: false, failOn: "error" });

/** A decoded image sharp still cannot process here is a 400 naming it, as intake's refusals are (code null). */
async function asItem<T>(at: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw ApiError.badRequest(`${at}: corrupt image: it could not be decoded`, at);
  }
}

/** An image of an edit: what intake decoded, the name its errors carry, and its upright size (uprightSize). */
export interface CanvasImage {
  image: DecodedImage;
  at: string;
  size: { width: number; height: number };
}

/** An image's upright size (EXIF orientations 5–8 swap its sides); a 400 naming `at` when sharp cannot read it. */
export async function uprightSize(image: DecodedImage, at: string): Promise<{ width: number; height: number }> {
  const { orientation } = await asItem(at, () => open(image.bytes).metadata());
  return orientation && orientation >= 5 ? { width: image.height, height: image.width } : { width: image.width, height: image.height };
}

async function placed(image: DecodedImage, rect: Rect): Promise<Buffer> {
  return open(image.bytes)
    .rotate()
    .resize(rect.width, rect.height, { fit: "fill" })
    .flatten({ background: BACKGROUND })
    .removeAlpha()
    .toColourspace("srgb")
    .raw()
    .toBuffer();
}

function paste(canvas: Uint8Array, canvasWidth: number, pixels: Uint8Array, rect: Rect): void {
  for (let y = 0; y < rect.height; y++) {
    canvas.set(pixels.subarray(y * rect.width * 3, (y + 1) * rect.width * 3), ((rect.y + y) * canvasWidth + rect.x) * 3);
  }
}

/**
 * The mask's edit weights over `rect` (where the first image sits): 1 − alpha. A mask must have an alpha channel and
 * the first image's upright size, as the compatible format asks; 400 naming it otherwise.
 */
async function maskWeights(mask: CanvasImage, first: { width: number; height: number }, rect: Rect): Promise<Float32Array> {
  const { at } = mask;
  const meta = await asItem(at, () => open(mask.image.bytes).metadata());
  if (!meta.hasAlpha) throw ApiError.badRequest(`${at} has no alpha channel: send a PNG whose transparent pixels mark where the image may change.`, at);
  if (mask.size.width !== first.width || mask.size.height !== first.height) {
    throw ApiError.badRequest(`${at} is ${mask.size.width}×${mask.size.height}, but the image it masks is ${first.width}×${first.height}: they must be the same size.`, at);
  }
  const { data, info } = await asItem(at, () => open(mask.image.bytes).rotate().resize(rect.width, rect.height, { fit: "fill" }).ensureAlpha().raw().toBuffer({ resolveWithObject: true }));
  const out = new Float32Array(rect.width * rect.height);
  for (let p = 0; p < out.length; p++) out[p] = 1 - data[p * info.channels + info.channels - 1]! / 255;
  return out;
}

/**
 * Lays `images` out on a width × height canvas (one image fills the canvas as far as its ratio allows); with a mask,
 * only the first image's masked pixels may change, and every latent cell that holds one of them.
 */
export async function composeCanvas(images: CanvasImage[], width: number, height: number, vaeScale: number, mask?: CanvasImage): Promise<Canvas> {
  const aspects = images.map(({ size }) => size.width / size.height);
  const rects = images.length === 1 ? [fitInside(aspects[0]!, { x: 0, y: 0, width, height })] : gridLayout(aspects, width, height);
  const rgb = new Uint8Array(width * height * 3).fill(GREY);
  const pixels = await Promise.all(images.map(({ image, at }, i) => asItem(at, () => placed(image, rects[i]!))));
  pixels.forEach((p, i) => paste(rgb, width, p, rects[i]!));
  if (!mask) return { width, height, rgb, weights: null, latentMask: null };
  const first = rects[0]!;
  const local = await maskWeights(mask, images[0]!.size, first);
  const weights = new Float32Array(width * height);
  for (let y = 0; y < first.height; y++) weights.set(local.subarray(y * first.width, (y + 1) * first.width), (first.y + y) * width + first.x);
  return { width, height, rgb, weights, latentMask: latentMask(weights, width, height, vaeScale) };
}
