// One decode, start to end, as a media worker runs it: the precheck, then sharp for images or ffmpeg for audio and video.
import type { DecodedMedia } from "../../inference/media.ts";
import { decodeAv } from "./av.ts";
import { decodeImage } from "./image.ts";
import type { DecodeLimits } from "./limits.ts";
import { precheck, type Want } from "./precheck.ts";

export async function decodeMedia(bytes: Uint8Array, want: Want, limits: DecodeLimits): Promise<DecodedMedia> {
  const sniffed = precheck(bytes, want);
  const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  // After the precheck, an image was asked for only when the bytes are one.
  if (want === "image" || sniffed.medium === "image") return decodeImage(bytes, sniffed, limits, sha256);
  return decodeAv(bytes, sniffed, want, limits, sha256);
}
