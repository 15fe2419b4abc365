// Decoded media as the core's conversation carries them: images, audio and video, whatever format they came in.
// The media layer (src/media/) produces them; model workers read them.

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
