// Messages between the media decoder (src/media/decode/decoder.ts) and its workers (workers/media-worker.ts).
import type { DecodeFailure } from "../types.ts";
import type { DecodedMedia } from "../../inference/media.ts";
import type { DecodeLimits } from "./limits.ts";
import type { Want } from "./precheck.ts";

/** One decode; `bytes` arrives transferred (its buffer moved, not copied). */
export interface DecodeRequest {
  id: number;
  bytes: Uint8Array;
  want: Want;
  limits: DecodeLimits;
}

export type DecodeReply =
  | { id: number; ok: true; media: DecodedMedia }
  /** `detail` is the decoder's own text when it failed unexpectedly: for the log, never for a client. */
  | { id: number; ok: false; reason: DecodeFailure; message: string; detail?: string };

/** The buffers a decoded medium holds, to transfer rather than copy back to the caller's thread. */
export function transferables(media: DecodedMedia): ArrayBuffer[] {
  const views: ArrayBufferView[] =
    media.medium === "image" ? [media.bytes] : media.medium === "audio" ? [media.samples] : [...media.frames.map((f) => f.rgb), ...(media.audio ? [media.audio.samples] : [])];
  const buffers = new Set<ArrayBuffer>();
  for (const v of views) if (v.buffer instanceof ArrayBuffer) buffers.add(v.buffer);
  return [...buffers];
}
