// The bounds one decode works within (pixels, duration, video sampling); they come from the config.

export interface DecodeLimits {
  /** Most pixels an image (or a video frame, before scaling) may have; checked from the header, before decoding. */
  maxPixels: number;
  /** Longest audio, in seconds (also bounds a video's audio track, with maxVideoS). */
  maxAudioS: number;
  /** Longest video, in seconds. */
  maxVideoS: number;
  /** Frames sampled per second of video... */
  videoFps: number;
  /** ...and at most this many: a longer video is sampled evenly at a lower rate. */
  videoMaxFrames: number;
  /** Sampled frames are scaled down (never up) to fit this many pixels on their longer side. */
  videoFrameSize: number;
}

/** The frame sampling rate for a video of `durationS`: the configured rate, lowered so the frames cover the whole video. */
export function samplingRate(durationS: number, limits: Pick<DecodeLimits, "videoFps" | "videoMaxFrames">): number {
  if (!(durationS > 0)) return limits.videoFps;
  return Math.min(limits.videoFps, limits.videoMaxFrames / durationS);
}

/** Width and height scaled to fit `box` on the longer side, keeping the aspect ratio; never scaled up. */
export function fitWithin(width: number, height: number, box: number): { width: number; height: number } {
  const scale = Math.min(1, box / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** The longest sound kept: audio's limit, and for a video's audio track the video's limit too. */
export function audioLimitS(limits: Pick<DecodeLimits, "maxAudioS" | "maxVideoS">, medium: "audio" | "video"): number {
  return medium === "audio" ? limits.maxAudioS : Math.min(limits.maxAudioS, limits.maxVideoS);
}

/** ffmpeg stops decoding this far past the limit: far enough to see a stream run past it, never a whole long one. */
export const DECODE_PAST_LIMIT_S = 1;

/** Decoded sound may end this much past its limit without being too long: lossy encoders pad a frame or two. */
const ENCODER_PADDING_S = 0.1;

/** Whether `decodedS` seconds of sound ran past `limitS` (whatever its header said). */
export const ranPast = (decodedS: number, limitS: number): boolean => decodedS > limitS + ENCODER_PADDING_S;
