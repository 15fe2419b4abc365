// Decodes audio (to mono 16 kHz float PCM) and video (sampled RGB frames plus its audio track) with ffmpeg.wasm.
import type { DecodedAudio, DecodedVideo, VideoFrame } from "../../inference/media.ts";
import { FFmpegSession } from "./ffmpeg.ts";
import { describe, failures } from "./failures.ts";
import { audioLimitS, DECODE_PAST_LIMIT_S, fitWithin, ranPast, samplingRate, type DecodeLimits } from "./limits.ts";
import { readPpm } from "./ppm.ts";
import { fellShort, mentionsTruncation, monoMix, readProbe, type ProbeReport } from "./probe.ts";
import type { Sniffed } from "./sniff.ts";
import { endsEarly } from "./truncation.ts";

/** The rate Whisper-style audio encoders read. */
export const AUDIO_RATE = 16_000;
const INPUT = "input";

type Want = "audio" | "video" | "any";

/** A failure after ffmpeg read the input: truncated when ffmpeg said the data stopped early or too little came out. */
const brokenOrCut = (s: Sniffed, log: string[], cut: boolean) => (cut || mentionsTruncation(log) ? failures.truncated(s) : failures.corrupt(s));

/** "wav audio", "mp4 video's audio track": what a too-long refusal calls the sound of `s`. */
const soundOf = (s: Sniffed): string => (s.medium === "video" ? `${describe(s)}'s audio track` : describe(s));

/**
 * The track as mono PCM, refused as too long when decoding runs past `limitS` whatever the header said (a wrong
 * length, or none): ffmpeg stops just past the limit, so a lying stream costs no more than an honest one.
 */
function decodeAudioTrack(ff: FFmpegSession, s: Sniffed, track: NonNullable<ProbeReport["audio"]>, limitS: number, sha256: string): DecodedAudio {
  const mix = ["-af", monoMix(track.channels), "-ac", "1", "-ar", String(AUDIO_RATE)];
  const cap = ["-t", String(limitS + DECODE_PAST_LIMIT_S)];
  const ok = ff.run(["-v", "error", "-i", INPUT, "-map", "0:a:0", "-vn", "-sn", "-dn", ...mix, ...cap, "-f", "f32le", "audio.f32"]);
  const raw = ff.read("audio.f32");
  if (!ok || !raw || raw.length < 4) throw brokenOrCut(s, ff.log, false);
  const samples = new Float32Array(raw.buffer, raw.byteOffset, raw.length >> 2);
  const durationS = samples.length / AUDIO_RATE;
  if (ranPast(durationS, limitS)) throw failures.tooLong(soundOf(s), null, limitS);
  if (fellShort(durationS, track.durationS)) throw failures.truncated(s);
  return { medium: "audio", format: s.format, sampleRate: AUDIO_RATE, samples, durationS, sha256 };
}

function decodeFrames(ff: FFmpegSession, s: Sniffed, video: NonNullable<ProbeReport["video"]>, limits: DecodeLimits): VideoFrame[] {
  const rate = samplingRate(video.durationS ?? 0, limits);
  const size = fitWithin(video.width, video.height, limits.videoFrameSize);
  const filter = `fps=${rate.toFixed(6)},scale=${size.width}:${size.height}:flags=area`;
  const ok = ff.run(["-v", "error", "-i", INPUT, "-map", "0:v:0", "-an", "-sn", "-dn", "-vf", filter, "-frames:v", String(limits.videoMaxFrames), "-pix_fmt", "rgb24", "frame%05d.ppm"]);
  const frames: VideoFrame[] = [];
  for (const [i, name] of ff.list("frame").entries()) {
    const image = readPpm(ff.read(name) ?? new Uint8Array());
    if (!image) throw failures.corrupt(s);
    frames.push({ timeS: i / rate, ...image });
  }
  if (!ok || frames.length === 0) throw brokenOrCut(s, ff.log, false);
  const expected = video.durationS === null ? 0 : Math.min(limits.videoMaxFrames, Math.floor(video.durationS * rate));
  if (frames.length < expected * 0.8 - 1) throw failures.truncated(s);
  return frames;
}

/** Audio or video bytes (sniffed as such) decoded as `want` asks; failures are MediaDecodeError with their reason. */
export async function decodeAv(bytes: Uint8Array, sniffed: Sniffed, want: Want, limits: DecodeLimits, sha256: string): Promise<DecodedAudio | DecodedVideo> {
  if (endsEarly(sniffed.format, bytes)) throw failures.truncated(sniffed);
  const ff = await FFmpegSession.open();
  ff.write(INPUT, bytes);
  const report = readProbe(ff.probe(INPUT));
  if (!report) throw brokenOrCut(sniffed, ff.log, false);
  const asVideo: Sniffed = { medium: "video", format: sniffed.format };
  const asAudio: Sniffed = { medium: "audio", format: sniffed.format };
  if (!report.video && !report.audio) throw failures.corrupt(sniffed);
  if (want === "audio" && !report.audio) throw failures.noAudioTrack(asVideo);
  if (want === "video" && !report.video) throw failures.wrongMedium("video", "audio-only");
  if (want === "audio" || !report.video) {
    // Asked for the sound of a video, the container's length stands in for a track that states none.
    const longestS = report.audio!.durationS ?? report.durationS;
    if (longestS !== null && longestS > limits.maxAudioS) throw failures.tooLong(describe(asAudio), longestS, limits.maxAudioS);
    return decodeAudioTrack(ff, asAudio, report.audio!, audioLimitS(limits, "audio"), sha256);
  }
  const video = report.video;
  if (video.durationS !== null && video.durationS > limits.maxVideoS) throw failures.tooLong(describe(asVideo), video.durationS, limits.maxVideoS);
  if (video.width * video.height > limits.maxPixels) throw failures.tooManyPixels(asVideo, video.width, video.height, limits.maxPixels);
  const soundLimitS = audioLimitS(limits, "video");
  // A sound track stated too long is refused before any frame is decoded.
  if (report.audio?.durationS != null && report.audio.durationS > soundLimitS) throw failures.tooLong(soundOf(asVideo), report.audio.durationS, soundLimitS);
  const frames = decodeFrames(ff, asVideo, video, limits);
  const audio = report.audio ? decodeAudioTrack(ff, asVideo, report.audio, soundLimitS, sha256) : null;
  return { medium: "video", format: sniffed.format, width: video.width, height: video.height, durationS: video.durationS ?? frames.length / limits.videoFps, frames, audio, sha256 };
}
