// The client-facing message of every decode failure: one wording per reason, no item name (intake adds it), no library text.
import { MediaDecodeError } from "../types.ts";
import type { Medium } from "../../inference/media.ts";
import type { Sniffed } from "./sniff.ts";

const NOUN: Record<Medium, string> = { image: "image", audio: "audio", video: "video" };

/** "png image", "mp3 audio", "mp4 video". */
export const describe = (s: Sniffed): string => `${s.format} ${NOUN[s.medium]}`;

const megapixels = (n: number): string => `${Math.round(n / 1e5) / 10} megapixels`;

export const failures = {
  empty: () => new MediaDecodeError("empty", "the media is empty (0 bytes)"),
  unknownFormat: () =>
    new MediaDecodeError("unknown_format", "unknown format: not an image (png, jpeg, gif, webp, tiff, avif), audio (wav, mp3, flac, ogg, opus, m4a, aac, aiff) or video (mp4, mov, webm, mkv, avi) format kiln reads"),
  /** Audio or video was asked for and the bytes are another medium (an image, or audio without a picture). */
  wrongMedium: (wanted: "audio" | "video", got: Sniffed | "audio-only") =>
    new MediaDecodeError(
      "unknown_format",
      got === "audio-only" ? "not a video: the file holds audio only" : `not ${wanted === "audio" ? "audio" : "a video"}: got ${describe(got)}`,
    ),
  notImage: (got: Sniffed) => new MediaDecodeError("not_image", `not an image: got ${describe(got)}`),
  corrupt: (s: Sniffed) => new MediaDecodeError("corrupt", `corrupt ${describe(s)}: it could not be decoded`),
  /** The decoder crashed or ran past its time limit on these bytes. */
  undecodable: (what: string) => new MediaDecodeError("corrupt", `corrupt ${what}: decoding it failed`),
  truncated: (s: Sniffed) => new MediaDecodeError("truncated", `truncated ${describe(s)}: the data ends early`),
  tooManyPixels: (s: Sniffed, width: number, height: number, max: number) =>
    new MediaDecodeError(
      "too_many_pixels",
      `${describe(s)} too large: ${width}×${height} is ${megapixels(width * height)}, above the limit of ${megapixels(max)}`,
    ),
  noAudioTrack: (s: Sniffed) => new MediaDecodeError("no_audio_track", `the ${describe(s)} has no audio track`),
  /** `what`: "wav audio", "mp4 video's audio track"; `seconds` null when decoding found it longer than its header said. */
  tooLong: (what: string, seconds: number | null, max: number) =>
    new MediaDecodeError(
      "too_long",
      seconds === null ? `the ${what} runs past the limit of ${max} s` : `the ${what} is ${Math.round(seconds)} s long, above the limit of ${max} s`,
    ),
};
