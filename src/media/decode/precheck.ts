// The checks that need no decoder (empty, unknown format, the wrong medium): cheap enough to run on the event loop.
import { failures } from "./failures.ts";
import { sniffMedia, type Sniffed } from "./sniff.ts";

/** What the caller can take: one medium, or `any` (decoded as whatever the bytes are). */
export type Want = "image" | "audio" | "video" | "any";

/** What the bytes are; throws MediaDecodeError when they cannot be what was asked for. */
export function precheck(bytes: Uint8Array, want: Want): Sniffed {
  if (bytes.length === 0) throw failures.empty();
  const sniffed = sniffMedia(bytes);
  if (!sniffed) throw failures.unknownFormat();
  if (want === "image" && sniffed.medium !== "image") throw failures.notImage(sniffed);
  if ((want === "audio" || want === "video") && sniffed.medium === "image") throw failures.wrongMedium(want, sniffed);
  if (want === "video" && sniffed.medium === "audio") throw failures.wrongMedium("video", "audio-only");
  return sniffed;
}
