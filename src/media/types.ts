// What the media layer hands on: decoded images, audio and video, and the named reasons a medium is refused.
// Fetching (fetch-policy), decoding (decode/) and intake (intake.ts) share these; nothing here names a wire format.

/** The kinds of media a model may take. */
export type Medium = "image" | "audio" | "video";

/** An image that decoded: its encoded bytes (what a vision encoder resizes) and what its header said. */
export interface DecodedImage {
  medium: "image";
  /** sharp's format name: png, jpeg, webp, gif, tiff, avif, heif, svg. */
  format: string;
  width: number;
  height: number;
  bytes: Uint8Array;
  /** Hex SHA-256 of `bytes`: the content policy's and the prefix cache's key. */
  sha256: string;
}

/** Audio as a Whisper-style encoder reads it: mono float PCM at `sampleRate`. */
export interface DecodedAudio {
  medium: "audio";
  /** Container or codec name the decoder recognised (wav, mp3, flac, ogg, webm, mp4, ...). */
  format: string;
  sampleRate: number;
  samples: Float32Array;
  durationS: number;
  sha256: string;
}

/** One sampled video frame, packed RGB (3 bytes a pixel, rows top to bottom). */
export interface VideoFrame {
  timeS: number;
  width: number;
  height: number;
  rgb: Uint8Array;
}

/** A video as sampled frames plus its audio track (null when it has none). */
export interface DecodedVideo {
  medium: "video";
  format: string;
  width: number;
  height: number;
  durationS: number;
  frames: VideoFrame[];
  audio: DecodedAudio | null;
  sha256: string;
}

export type DecodedMedia = DecodedImage | DecodedAudio | DecodedVideo;

/**
 * Why a medium could not be decoded. Each reason has its own message, without the item's name: intake prefixes it
 * (`input[0].content[1]: ...`).
 */
export type DecodeFailure =
  | "empty" // zero bytes
  | "unknown_format" // no decoder recognises the bytes
  | "corrupt" // recognised but broken
  | "truncated" // recognised, ends early
  | "too_many_pixels" // header says more pixels than the limit (decompression bomb), refused before decoding
  | "no_audio_track" // a container without audio, asked for audio
  | "not_image" // asked for an image, got another medium
  | "too_long"; // longer than the duration cap

export class MediaDecodeError extends Error {
  constructor(readonly reason: DecodeFailure, message: string) {
    super(message);
  }
}

/** Why a remote URL was not fetched; each reason's message names the failure. */
export type FetchFailure =
  | "bad_url" // not http(s), malformed, credentials in it
  | "blocked" // fetch policy: a forbidden address (loopback, private, link-local, CGNAT, multicast, metadata) or not on the allow-list
  | "dns" // the name does not resolve
  | "unreachable" // connect failed, reset, or an error status
  | "timeout"
  | "robots" // robots.txt disallows it
  | "too_large" // more bytes than the cap
  | "redirects"; // more redirects than the cap

export class FetchRefusal extends Error {
  constructor(readonly reason: FetchFailure, message: string) {
    super(message);
  }
}
