// The media decoder end to end through its worker threads: every bad input gets its named reason, good ones decode
// to the right shapes and values, and a wedged or crashing decode costs one worker, never the server.
import { afterAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { createMediaDecoder, type MediaDecoder, type Want } from "../../src/media/decode/decoder.ts";
import { MediaDecodeError } from "../../src/media/types.ts";
import type { DecodedAudio, DecodedImage, DecodedMedia, DecodedVideo } from "../../src/inference/media.ts";
import { AV, noiseImage, pngBomb, sine, wavBytes } from "../helpers/media-fixtures.ts";

const config = (env: Record<string, string> = {}) => loadConfig({ KILN_MEDIA_DECODE_TIMEOUT_MS: "60000", ...env }, []);
const decoders: MediaDecoder[] = [];
const decoder = (env?: Record<string, string>, workerUrl?: URL) => {
  const d = createMediaDecoder(config(env), { workerUrl });
  decoders.push(d);
  return d;
};
afterAll(() => Promise.all(decoders.map((d) => d.close())));

const shared = decoder({ KILN_MEDIA_MAX_AUDIO_S: "10", KILN_MEDIA_MAX_VIDEO_S: "10" });
/** The reason and message of a refused decode; fails the test if it decoded. */
async function refusal(p: Promise<DecodedMedia>): Promise<[string, string]> {
  const e = await p.then(
    (m) => new Error(`decoded as ${m.medium}`),
    (e: unknown) => e,
  );
  if (!(e instanceof MediaDecodeError)) throw e;
  return [e.reason, e.message];
}

const text = (s: string) => new TextEncoder().encode(s);
const cut = (b: Uint8Array, keep: number) => b.slice(0, Math.floor(b.length * keep));
/** A WAV of `seconds` at 8 kHz whose fact chunk says 1 s and whose data size says "unknown" (0xFFFFFFFF). */
function lyingWav(seconds: number): Uint8Array {
  const fact = new Uint8Array(4);
  new DataView(fact.buffer).setUint32(0, 8000, true);
  const wav = wavBytes(sine(440, seconds, 8000), 8000, 1, { id: "fact", body: fact });
  const v = new DataView(wav.buffer);
  v.setUint32(4, 0xffffffff, true);
  v.setUint32(52, 0xffffffff, true);
  return wav;
}
/** A little-endian TIFF signature followed by bytes that are no TIFF structure. */
const tiffJunk = () => Uint8Array.from([0x49, 0x49, 0x2a, 0x00, ...Array.from({ length: 200 }, (_, i) => (i * 37) % 256)]);

describe("bad input: each gets its reason, and no worker is lost", () => {
  const cases: [string, () => Promise<Uint8Array> | Uint8Array, Want, string, RegExp][] = [
    ["empty bytes", () => new Uint8Array(), "any", "empty", /^the media is empty/],
    ["garbage bytes", () => text("\u0001\u0002 this is no media, just bytes ".repeat(40)), "any", "unknown_format", /^unknown format/],
    ["a text data URL's bytes", () => text("data:text/plain;base64,aGVsbG8="), "image", "unknown_format", /./],
    ["a truncated PNG", async () => cut(await noiseImage("png"), 0.6), "image", "truncated", /^truncated png image/],
    ["a PNG cut inside its header", async () => (await noiseImage("png")).slice(0, 40), "image", "truncated", /./],
    ["a PNG with a damaged IDAT (bad CRC)", async () => {
      const png = await noiseImage("png");
      const at = new TextDecoder("latin1").decode(png).indexOf("IDAT") + 40;
      png[at] = png[at]! ^ 0xff;
      return png;
    }, "image", "corrupt", /^corrupt png image/],
    // The sniffer recognises these: sharp's "unsupported image format" makes them corrupt, never unknown_format.
    ["junk after a TIFF signature, as anything", () => tiffJunk(), "any", "corrupt", /^corrupt tiff image: it could not be decoded$/],
    ["junk after a TIFF signature, as an image", () => tiffJunk(), "image", "corrupt", /^corrupt tiff image: it could not be decoded$/],
    ["garbage after a PNG signature", () => Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...Array.from({ length: 200 }, (_, i) => (i * 37) % 256)]), "image", "corrupt", /./],
    ["a 30000×30000 PNG bomb (refused from its header)", () => pngBomb(30000, 30000), "image", "too_many_pixels", /900 megapixels, above the limit of 50 megapixels/],
    ["a truncated JPEG", async () => cut(await noiseImage("jpeg"), 0.7), "any", "truncated", /./],
    ["a truncated GIF", async () => cut(await noiseImage("gif"), 0.7), "image", "truncated", /./],
    ["a WAV with a broken header", () => {
      const wav = wavBytes(sine(440, 1, 16000), 16000);
      new DataView(wav.buffer).setUint32(24, 0xfffffff0, true);
      return wav;
    }, "audio", "corrupt", /^corrupt wav audio/],
    ["a truncated WAV", () => cut(wavBytes(sine(440, 1, 16000), 16000), 0.5), "audio", "truncated", /^truncated wav audio/],
    ["a truncated MP3", async () => cut(await AV.mp3(), 0.4), "audio", "truncated", /./],
    ["a truncated MP4", async () => cut(await AV.mp4(), 0.5), "any", "truncated", /./],
    ["an MP4 without an audio track, as audio", () => AV.mp4Silent(), "audio", "no_audio_track", /^the mp4 video has no audio track$/],
    ["audio, as an image", () => wavBytes(sine(440, 0.2, 16000), 16000), "image", "not_image", /^not an image: got wav audio$/],
    ["a video, as an image", () => AV.mp4(), "image", "not_image", /^not an image: got mp4 video$/],
    ["an image, as audio", () => noiseImage("png"), "audio", "unknown_format", /^not audio: got png image$/],
    ["audio only, as video", () => AV.mp3(), "video", "unknown_format", /^not a video: the file holds audio only$/],
    ["a WebM holding audio only, as video", () => AV.webmAudio(), "video", "unknown_format", /^not a video/],
    ["audio above the duration limit", () => wavBytes(sine(440, 11, 8000), 8000), "audio", "too_long", /is 11 s long, above the limit of 10 s$/],
    // ffprobe takes the fact chunk's 1 s (the data size is "unknown"); ffmpeg would read all 12 s.
    ["a WAV whose header says 1 s and that holds 12 s", () => lyingWav(12), "audio", "too_long", /^the wav audio runs past the limit of 10 s$/],
    ["the same, as anything", () => lyingWav(12), "any", "too_long", /^the wav audio runs past the limit of 10 s$/],
  ];

  test.each(cases)("%s", async (_name, make, want, reason, message) => {
    const [got, text] = await refusal(shared.decode(await make(), want));
    expect(got).toBe(reason);
    expect(text).toMatch(message);
    expect(text).not.toMatch(/vips|ffmpeg|libpng|@ 0x|\//i);
  });

  test("a video above the pixel limit is refused from its probe; one above the duration limit too", async () => {
    expect(await refusal(decoder({ KILN_MEDIA_MAX_PIXELS: "10000" }).decode(await AV.mp4(), "video"))).toEqual(["too_many_pixels", expect.stringContaining("160×120")]);
    expect((await refusal(decoder({ KILN_MEDIA_MAX_VIDEO_S: "2" }).decode(await AV.mp4(), "any")))[0]).toBe("too_long");
  });

  test("a lying WAV within the limit decodes whole; one a little past it is refused", async () => {
    expect(((await shared.decode(lyingWav(9.5), "audio")) as DecodedAudio).samples.length).toBe(152_000);
    expect(await refusal(shared.decode(lyingWav(10.5), "audio"))).toEqual(["too_long", "the wav audio runs past the limit of 10 s"]);
  });

  test("a video's audio track is held to the audio limit too", async () => {
    const d = decoder({ KILN_MEDIA_MAX_AUDIO_S: "2", KILN_MEDIA_MAX_VIDEO_S: "10" });
    expect(await refusal(d.decode(await AV.mp4(), "video"))).toEqual(["too_long", "the mp4 video's audio track is 3 s long, above the limit of 2 s"]);
    expect((await refusal(d.decode(await AV.mp4(), "audio")))[0]).toBe("too_long");
    expect(((await d.decode(await AV.mp4Silent(), "video")) as DecodedVideo).frames.length).toBe(3);
  });

  test("after all of them the same worker still decodes, and none was replaced", async () => {
    const audio = (await shared.decode(wavBytes(sine(440, 0.5, 16000), 16000), "audio")) as DecodedAudio;
    expect(audio.samples.length).toBe(8000);
    expect(shared.stats()).toEqual({ workers: 1, busy: 0, queued: 0, replaced: 0 });
  });
});

/** Zero crossings per second / 2: the frequency of a clean tone. */
function toneHz(samples: Float32Array, rate: number): number {
  let crossings = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i - 1]! < 0 !== samples[i]! < 0) crossings++;
  return crossings / 2 / (samples.length / rate);
}
const rms = (s: Float32Array) => Math.sqrt(s.reduce((a, x) => a + x * x, 0) / s.length);

describe("audio decodes to mono float PCM at 16 kHz", () => {
  test("a 16 kHz 16-bit WAV comes back sample for sample, within 16-bit quantization", async () => {
    const wave = sine(440, 2, 16000);
    const audio = (await shared.decode(wavBytes(wave, 16000), "audio")) as DecodedAudio;
    expect([audio.medium, audio.format, audio.sampleRate, audio.samples.length, audio.durationS]).toEqual(["audio", "wav", 16000, 32000, 2]);
    let worst = 0;
    for (let i = 0; i < wave.length; i++) worst = Math.max(worst, Math.abs(audio.samples[i]! - wave[i]!));
    // Written as round(x × 32767), read back as n / 32768: half a step plus the scale difference.
    expect(worst).toBeLessThan(0.5 / 32767 + 0.5 / 32768);
  });

  test.each([
    [44100, 2],
    [48000, 1],
    [22050, 2],
    [8000, 1],
  ])("a %d Hz WAV of %d channel(s) is resampled (and mixed down): 16000 samples a second, the tone within the resampler's error", async (rate, channels) => {
    const audio = (await shared.decode(wavBytes(sine(440, 2, rate), rate, channels), "any")) as DecodedAudio;
    expect(audio.samples.length).toBe(32000);
    const expected = sine(440, 2, 16000);
    let worst = 0;
    // The resampler's filter needs a few dozen samples to settle at each end.
    for (let i = 64; i < expected.length - 64; i++) worst = Math.max(worst, Math.abs(audio.samples[i]! - expected[i]!));
    // 16-bit quantization (1.5e-5) plus swresample's passband error on a 440 Hz tone (about 2e-5 measured, -94 dB).
    expect(worst).toBeLessThan(5e-5);
  });

  test.each([
    ["mp3", AV.mp3, "mp3"],
    ["flac", AV.flac, "flac"],
    ["ogg vorbis", AV.oggVorbis, "ogg"],
    ["ogg opus", AV.opus, "opus"],
    ["m4a (aac)", AV.m4a, "m4a"],
    ["webm (opus, no picture)", AV.webmAudio, "webm"],
    ["aiff", AV.aiff, "aiff"],
    ["aac (ADTS)", AV.adts, "aac"],
  ])("%s: 3 s of a 440 Hz tone", async (_name, make, format) => {
    const bytes = await make();
    const sha = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const audio = (await shared.decode(bytes, "any")) as DecodedAudio;
    expect([audio.medium, audio.format, audio.sampleRate, audio.sha256]).toEqual(["audio", format, 16000, sha]);
    // Lossy encoders pad by up to a frame or two (26-60 ms) unless the container trims it.
    expect(Math.abs(audio.durationS - 3)).toBeLessThan(0.1);
    expect(audio.samples.length).toBe(Math.round(audio.durationS * 16000));
    expect(toneHz(audio.samples.subarray(1600, 46400), 16000)).toBeCloseTo(440, -1);
    // lavfi's sine is at 1/8 of full scale: RMS 0.125 / √2.
    expect(rms(audio.samples.subarray(1600, 46400))).toBeCloseTo(0.125 / Math.SQRT2, 2);
  });
});

describe("video decodes to sampled RGB frames plus its audio track", () => {
  test.each([
    ["mp4 (H.264 + AAC)", AV.mp4, "mp4"],
    ["webm (VP8 + Opus)", AV.webmOpus, "webm"],
    ["webm (VP8 + Vorbis)", AV.webmVorbis, "webm"],
    ["mkv (H.264 + FLAC)", AV.mkv, "mkv"],
    ["avi (MPEG-4 part 2 + MP3)", AV.avi, "avi"],
  ])("%s: 3 s at 1 frame a second, 160×120, with 3 s of sound", async (_name, make, format) => {
    const video = (await shared.decode(await make(), "any")) as DecodedVideo;
    expect([video.medium, video.format, video.width, video.height]).toEqual(["video", format, 160, 120]);
    expect(video.durationS).toBeCloseTo(3, 0);
    expect(video.frames.map((f) => [f.timeS, f.width, f.height, f.rgb.length])).toEqual([0, 1, 2].map((t) => [t, 160, 120, 160 * 120 * 3]));
    // testsrc draws colour bars and a moving counter: frames are neither blank nor all alike.
    expect(new Set(video.frames[0]!.rgb).size).toBeGreaterThan(16);
    expect(video.frames[0]!.rgb).not.toEqual(video.frames[2]!.rgb);
    expect(video.audio?.sampleRate).toBe(16000);
    expect(Math.abs(video.audio!.durationS - 3)).toBeLessThan(0.1);
  });

  test("a video without sound has a null audio track; asked for audio it is refused (above)", async () => {
    const video = (await shared.decode(await AV.mp4Silent(), "video")) as DecodedVideo;
    expect([video.frames.length, video.audio]).toEqual([3, null]);
  });

  test("asked for audio, a video gives its audio track", async () => {
    const audio = (await shared.decode(await AV.mp4(), "audio")) as DecodedAudio;
    expect([audio.medium, audio.format]).toEqual(["audio", "mp4"]);
    expect(Math.abs(audio.durationS - 3)).toBeLessThan(0.1);
  });

  test("a 1280×720 video is scaled to fit 768 px; the most frames are spread over a longer video", async () => {
    const wide = (await decoder({ KILN_VIDEO_FPS: "4", KILN_VIDEO_MAX_FRAMES: "4" }).decode(await AV.mp4Wide(), "video")) as DecodedVideo;
    expect([wide.width, wide.height]).toEqual([1280, 720]);
    // 2 s at 4 a second would be 8 frames: 4 at most, so 2 a second.
    expect(wide.frames.map((f) => [f.timeS, f.width, f.height])).toEqual([0, 0.5, 1, 1.5].map((t) => [t, 768, 432]));
  });
});

describe("images", () => {
  test.each(["png", "jpeg", "webp", "gif", "tiff", "avif"] as const)("%s: size from the header, the bytes and their hash handed back", async (format) => {
    const bytes = await noiseImage(format);
    const copy = bytes.slice();
    const image = (await shared.decode(bytes, "image")) as DecodedImage;
    expect([image.medium, image.format, image.width, image.height]).toEqual(["image", format === "avif" ? "avif" : format, 96, 64]);
    expect(image.bytes).toEqual(copy);
    expect(image.sha256).toBe(new Bun.CryptoHasher("sha256").update(copy).digest("hex"));
  });

  test("the input's buffer is transferred to the worker, not copied; a view into a larger buffer is copied instead", async () => {
    const owned = await noiseImage("png");
    await shared.decode(owned, "image");
    expect(owned.byteLength).toBe(0);
    const pool = new Uint8Array(100_000);
    const png = await noiseImage("png");
    pool.set(png, 10);
    const view = pool.subarray(10, 10 + png.length);
    expect(((await shared.decode(view, "image")) as DecodedImage).bytes).toEqual(png);
    expect(pool.byteLength).toBe(100_000);
  });
});
