// Media made by the tests themselves (no committed blobs): WAV and PNG written by hand, images from sharp, and audio
// and video encoded by the same ffmpeg.wasm the decoder uses, from its test sources (lavfi sine, testsrc), cached in /tmp.
import { crc32, deflateSync } from "node:zlib";
import { mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import pkg from "../../package.json" with { type: "json" };
import { FFmpegSession } from "../../src/media/decode/ffmpeg.ts";

const CACHE = join("/tmp", "kiln-media-fixtures", pkg.dependencies["@ffmpeg/core"]);

/** A sine of `hz` at `amplitude`, `seconds` long, sampled at `rate`. */
export function sine(hz: number, seconds: number, rate: number, amplitude = 0.5): Float32Array {
  const out = new Float32Array(Math.round(seconds * rate));
  for (let i = 0; i < out.length; i++) out[i] = amplitude * Math.sin((2 * Math.PI * hz * i) / rate);
  return out;
}

/** 16-bit PCM WAV of `channels` interleaved channels (each sample of `samples` repeated on every channel). */
export function wavBytes(samples: Float32Array, rate: number, channels = 1, extraChunk?: { id: string; body: Uint8Array }): Uint8Array {
  const dataBytes = samples.length * channels * 2;
  const extra = extraChunk ? 8 + extraChunk.body.length + (extraChunk.body.length & 1) : 0;
  const buf = new ArrayBuffer(44 + extra + dataBytes);
  const v = new DataView(buf);
  const text = (at: number, s: string) => [...s].forEach((c, i) => v.setUint8(at + i, c.charCodeAt(0)));
  text(0, "RIFF");
  v.setUint32(4, buf.byteLength - 8, true);
  text(8, "WAVE");
  text(12, "fmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, rate, true);
  v.setUint32(28, rate * channels * 2, true);
  v.setUint16(32, channels * 2, true);
  v.setUint16(34, 16, true);
  let at = 36;
  if (extraChunk) {
    text(at, extraChunk.id);
    v.setUint32(at + 4, extraChunk.body.length, true);
    new Uint8Array(buf, at + 8).set(extraChunk.body);
    at += extra;
  }
  text(at, "data");
  v.setUint32(at + 4, dataBytes, true);
  at += 8;
  for (const s of samples) {
    for (let c = 0; c < channels; c++, at += 2) v.setInt16(at, Math.max(-32768, Math.min(32767, Math.round(s * 32767))), true);
  }
  return new Uint8Array(buf);
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  v.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)) >>> 0);
  return out;
}

/** A decompression bomb: a few hundred bytes whose header claims `width`×`height` grey pixels. */
export function pngBomb(width: number, height: number): Uint8Array {
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk("IHDR", ihdr), pngChunk("IDAT", deflateSync(new Uint8Array(4096))), pngChunk("IEND", new Uint8Array())];
  return Uint8Array.from(parts.flatMap((p) => [...p]));
}

/** A noisy RGB image in `format`, so a cut anywhere leaves real pixel data missing. */
export async function noiseImage(format: "png" | "jpeg" | "webp" | "gif" | "tiff" | "avif", width = 96, height = 64): Promise<Uint8Array> {
  const pixels = new Uint8Array(width * height * 3);
  let x = 12345;
  for (let i = 0; i < pixels.length; i++) pixels[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  return new Uint8Array(await sharp(pixels, { raw: { width, height, channels: 3 } }).toFormat(format).toBuffer());
}

/** Runs ffmpeg.wasm with `args` writing `out`; the file is cached under /tmp by its arguments. */
export async function ffmpegFixture(args: string[], out: string): Promise<Uint8Array> {
  const key = new Bun.CryptoHasher("sha256").update(JSON.stringify([args, out])).digest("hex").slice(0, 16);
  const path = join(CACHE, `${key}-${out}`);
  const cached = Bun.file(path);
  if (await cached.exists()) return new Uint8Array(await cached.arrayBuffer());
  const ff = await FFmpegSession.open();
  if (!ff.run(["-v", "error", ...args, out])) throw new Error(`ffmpeg could not make ${out}: ${ff.log.join(" | ")}`);
  const bytes = ff.read(out)!;
  mkdirSync(CACHE, { recursive: true });
  // Written under a temporary name first, so a concurrent test never reads half a file.
  const temp = `${path}.${process.pid}.tmp`;
  await Bun.write(temp, bytes);
  renameSync(temp, path);
  return bytes;
}

const tone = (seconds: number) => ["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=44100:duration=${seconds}`];
const picture = (seconds: number, size = "160x120", rate = 10) => ["-f", "lavfi", "-i", `testsrc=size=${size}:rate=${rate}:duration=${seconds}`];

/** The encoded fixtures the decoder tests use, each 3 s long unless named otherwise. */
export const AV = {
  mp3: () => ffmpegFixture([...tone(3), "-c:a", "libmp3lame"], "tone.mp3"),
  flac: () => ffmpegFixture([...tone(3), "-c:a", "flac"], "tone.flac"),
  oggVorbis: () => ffmpegFixture([...tone(3), "-c:a", "libvorbis"], "tone.ogg"),
  opus: () => ffmpegFixture([...tone(3), "-c:a", "libopus"], "tone.opus"),
  m4a: () => ffmpegFixture([...tone(3), "-c:a", "aac"], "tone.m4a"),
  aiff: () => ffmpegFixture([...tone(3)], "tone.aiff"),
  adts: () => ffmpegFixture([...tone(3), "-c:a", "aac", "-f", "adts"], "tone.aac"),
  webmAudio: () => ffmpegFixture([...tone(3), "-c:a", "libopus", "-f", "webm"], "tone.webm"),
  mp4: () => ffmpegFixture([...picture(3), ...tone(3), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"], "clip.mp4"),
  mp4Silent: () => ffmpegFixture([...picture(3), "-c:v", "libx264", "-pix_fmt", "yuv420p"], "silent.mp4"),
  /** 1280×720, so sampled frames are scaled down to the frame size. */
  mp4Wide: () => ffmpegFixture([...picture(2, "1280x720", 5), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"], "wide.mp4"),
  webmOpus: () => ffmpegFixture([...picture(3), ...tone(3), "-c:v", "libvpx", "-c:a", "libopus", "-shortest"], "clip.webm"),
  webmVorbis: () => ffmpegFixture([...picture(3), ...tone(3), "-c:v", "libvpx", "-c:a", "libvorbis", "-shortest"], "clip-vorbis.webm"),
  avi: () => ffmpegFixture([...picture(3), ...tone(3), "-c:v", "mpeg4", "-c:a", "libmp3lame", "-shortest"], "clip.avi"),
  mkv: () => ffmpegFixture([...picture(3), ...tone(3), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "flac", "-shortest"], "clip.mkv"),
  /** `seconds` of 720p noise at about 10 Mbit/s (40 s is about 50 MB), with a tone: for the load scenario. */
  noisyVideo: (seconds: number) =>
    ffmpegFixture(
      ["-f", "lavfi", "-i", `testsrc2=size=1280x720:rate=30:duration=${seconds}`, ...tone(seconds), "-vf", "noise=alls=30:allf=t", "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "10M", "-maxrate", "10M", "-bufsize", "10M", "-c:a", "aac"],
      "noisy.mp4",
    ),
};
