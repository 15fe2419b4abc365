// Encodes a rendered image (packed RGB) in the format the client asked for, with sharp.
import sharp from "sharp";

/** The formats an image is answered in. */
export const OUTPUT_FORMATS = ["png", "jpeg", "webp"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `quality`: jpeg and webp quality 0–100 (the API's output_compression; 100 when unset); png is lossless. */
export async function encodeImage(rgb: Uint8Array, width: number, height: number, format: OutputFormat, quality: number | null): Promise<Uint8Array> {
  const image = sharp(rgb, { raw: { width, height, channels: 3 } });
  const q = Math.max(1, quality ?? 100);
  const out = format === "png" ? image.png() : format === "jpeg" ? image.jpeg({ quality: q }) : image.webp({ quality: q });
  return new Uint8Array(await out.toBuffer());
}
