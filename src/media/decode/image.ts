// Decodes an image with sharp: header first (the pixel limit refuses a decompression bomb before any pixel is decoded), then one full decode.
import sharp from "sharp";
import type { DecodedImage } from "../../inference/media.ts";
import { failures } from "./failures.ts";
import type { DecodeLimits } from "./limits.ts";
import type { Sniffed } from "./sniff.ts";
import { endsEarly } from "./truncation.ts";

/**
 * Which reason a sharp failure is: libvips says "corrupt header" and "read error" for truncation and corruption alike.
 * The sniffer recognised these bytes, so libvips' "unsupported image format" is a broken image too: unknown_format
 * is kept for bytes the sniffer recognises as nothing (intake reads those as a text document).
 */
function refusal(s: Sniffed, bytes: Uint8Array): Error {
  return endsEarly(s.format, bytes) ? failures.truncated(s) : failures.corrupt(s);
}

export async function decodeImage(bytes: Uint8Array, s: Sniffed, limits: Pick<DecodeLimits, "maxPixels">, sha256: string): Promise<DecodedImage> {
  let width: number;
  let height: number;
  try {
    // Header only: no pixel is decoded, so a 30000×30000 bomb costs nothing here.
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    width = meta.width;
    height = meta.height;
  } catch {
    throw refusal(s, bytes);
  }
  if (width * height > limits.maxPixels) throw failures.tooManyPixels(s, width, height, limits.maxPixels);
  try {
    // Every pixel decoded once, streamed into a thumbnail so memory stays small; failOn "error" refuses truncated or
    // broken data but lets through the harmless warnings many real JPEGs carry. The thumbnail itself is discarded.
    await sharp(bytes, { failOn: "error", limitInputPixels: limits.maxPixels, sequentialRead: true })
      .resize(64, 64, { fit: "inside", fastShrinkOnLoad: false })
      .raw()
      .toBuffer();
  } catch {
    throw refusal(s, bytes);
  }
  return { medium: "image", format: s.format, width, height, bytes, sha256 };
}
