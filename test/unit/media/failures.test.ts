// Every decode failure reads differently, names no item (intake does) and carries no library text.
import { expect, test } from "bun:test";
import { failures } from "../../../src/media/decode/failures.ts";
import { MediaDecodeError } from "../../../src/media/types.ts";

const png = { medium: "image", format: "png" } as const;
const mp4 = { medium: "video", format: "mp4" } as const;
const wav = { medium: "audio", format: "wav" } as const;

const all: MediaDecodeError[] = [
  failures.empty(),
  failures.unknownFormat(),
  failures.wrongMedium("audio", png),
  failures.wrongMedium("video", "audio-only"),
  failures.notImage(wav),
  failures.corrupt(wav),
  failures.undecodable("mp4 video"),
  failures.truncated(png),
  failures.tooManyPixels(png, 30000, 30000, 50_000_000),
  failures.noAudioTrack(mp4),
  failures.tooLong("wav audio", 3605.4, 1800),
  failures.tooLong("mp4 video's audio track", null, 300),
];

test("each is a MediaDecodeError with its own wording", () => {
  for (const e of all) expect(e).toBeInstanceOf(MediaDecodeError);
  expect(new Set(all.map((e) => e.message)).size).toBe(all.length);
});

test("the messages say what is wrong in plain words", () => {
  expect(all.map((e) => [e.reason, e.message])).toEqual([
    ["empty", "the media is empty (0 bytes)"],
    ["unknown_format", expect.stringMatching(/^unknown format: not an image \(png, jpeg/)],
    ["unknown_format", "not audio: got png image"],
    ["unknown_format", "not a video: the file holds audio only"],
    ["not_image", "not an image: got wav audio"],
    ["corrupt", "corrupt wav audio: it could not be decoded"],
    ["corrupt", "corrupt mp4 video: decoding it failed"],
    ["truncated", "truncated png image: the data ends early"],
    ["too_many_pixels", "png image too large: 30000×30000 is 900 megapixels, above the limit of 50 megapixels"],
    ["no_audio_track", "the mp4 video has no audio track"],
    ["too_long", "the wav audio is 3605 s long, above the limit of 1800 s"],
    ["too_long", "the mp4 video's audio track runs past the limit of 300 s"],
  ]);
});

test("no message names an item, a path or a library", () => {
  for (const e of all) expect(e.message).not.toMatch(/input\[|content\[|\/|vips|ffmpeg|sharp|@ 0x/i);
});
