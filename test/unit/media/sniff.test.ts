// The magic-byte sniffer: each format kiln decodes from its first bytes, and nothing from bytes that only look close.
import { describe, expect, test } from "bun:test";
import { mp3FrameLength, sniffMedia } from "../../../src/media/decode/sniff.ts";

const bytes = (...parts: (string | number[])[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));
const pad = (b: Uint8Array, n = 64): Uint8Array => Uint8Array.from([...b, ...new Array(Math.max(0, n - b.length)).fill(0)]);
const be32 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const ftyp = (major: string, ...compatible: string[]) => bytes(be32(16 + 4 * compatible.length), "ftyp", major, [0, 0, 2, 0], ...compatible);
/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, no padding: 417-byte frames. */
const MP3_HEADER = [0xff, 0xfb, 0x90, 0x00];
const mp3Frames = (n: number) => Uint8Array.from(Array.from({ length: n }, () => [...MP3_HEADER, ...new Array(413).fill(0x55)]).flat());
/** An Ogg page whose first packet starts with `head`. */
const oggPage = (head: (string | number[])[]) => bytes("OggS", [0, 2], new Array(20).fill(0), [1, 19], ...head);
/** EBML header with the DocType element (0x42 0x82, length, text). */
const ebml = (docType: string) => bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01], [0x42, 0x82, 0x80 | docType.length], docType);

const KNOWN: [string, Uint8Array, string, string][] = [
  ["png", bytes([0x89], "PNG\r\n\x1a\n", [0, 0, 0, 13], "IHDR"), "image", "png"],
  ["jpeg", bytes([0xff, 0xd8, 0xff, 0xe0]), "image", "jpeg"],
  ["gif87a", bytes("GIF87a"), "image", "gif"],
  ["gif89a", bytes("GIF89a"), "image", "gif"],
  ["tiff little-endian", bytes("II*\0"), "image", "tiff"],
  ["tiff big-endian", bytes("MM\0*"), "image", "tiff"],
  ["webp", bytes("RIFF", [0, 1, 0, 0], "WEBPVP8 "), "image", "webp"],
  ["avif", ftyp("avif", "mif1", "miaf"), "image", "avif"],
  ["avif behind a generic mif1 brand", ftyp("mif1", "avif"), "image", "avif"],
  ["wav", bytes("RIFF", [0, 1, 0, 0], "WAVEfmt "), "audio", "wav"],
  ["rf64 wav", bytes("RF64", [255, 255, 255, 255], "WAVEds64"), "audio", "wav"],
  ["avi", bytes("RIFF", [0, 1, 0, 0], "AVI LIST"), "video", "avi"],
  ["mp3 with ID3", bytes("ID3", [4, 0, 0, 0, 0, 0, 0]), "audio", "mp3"],
  ["mp3 frames", mp3Frames(2), "audio", "mp3"],
  ["aac (ADTS)", bytes([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc]), "audio", "aac"],
  ["flac", bytes("fLaC", [0, 0, 0, 34]), "audio", "flac"],
  ["ogg opus", oggPage(["OpusHead", [1, 1]]), "audio", "opus"],
  ["ogg vorbis", oggPage([[1], "vorbis"]), "audio", "ogg"],
  ["ogg theora", oggPage([[0x80], "theora"]), "video", "ogg"],
  ["aiff", bytes("FORM", [0, 0, 1, 0], "AIFF"), "audio", "aiff"],
  ["m4a", ftyp("M4A ", "M4A ", "mp42", "isom"), "audio", "m4a"],
  ["mp4 (isom)", ftyp("isom", "iso2", "avc1", "mp41"), "video", "mp4"],
  ["mp4 (mp42)", ftyp("mp42", "isom"), "video", "mp4"],
  ["mov (ftyp qt)", ftyp("qt  ", "qt  "), "video", "mov"],
  ["mov without ftyp", bytes(be32(8), "moov"), "video", "mov"],
  ["webm", ebml("webm"), "video", "webm"],
  ["matroska", ebml("matroska"), "video", "mkv"],
];

describe("sniffMedia", () => {
  test.each(KNOWN)("%s", (_name, head, medium, format) => {
    expect(sniffMedia(pad(head))).toEqual({ medium: medium as "image", format });
  });

  test.each([
    ["empty", new Uint8Array()],
    ["text", bytes("hello, this is not media at all")],
    ["a data URL's text", bytes("data:image/png;base64,iVBORw0KGgo=")],
    ["RIFF of an unknown kind", bytes("RIFF", [0, 1, 0, 0], "CDXA")],
    ["HEIC (no HEVC decoder in this libvips)", ftyp("heic", "mif1", "heic")],
    ["a lone frame sync followed by junk", Uint8Array.from([...MP3_HEADER, ...new Array(413).fill(0x55), 0x12, 0x34, 0x56, 0x78])],
    ["an MPEG frame header with a reserved sample rate", bytes([0xff, 0xfb, 0x9c, 0x00])],
    ["PNG's signature cut short", bytes([0x89], "PNG")],
    ["BMP (libvips here has no loader)", bytes("BM", [0, 0, 0, 0])],
  ])("%s is not recognised", (_name, head) => {
    expect(sniffMedia(head)).toBeNull();
  });
});

test("sniffMedia never throws, whatever the bytes: the intake can ask it first whether bytes are media at all", () => {
  let x = 7;
  const random = (n: number) => Uint8Array.from({ length: n }, () => (x = (x * 1103515245 + 12345) >>> 0) >>> 24);
  const inputs = [...KNOWN.flatMap(([, head]) => Array.from({ length: head.length + 1 }, (_, n) => head.subarray(0, n))), ...Array.from({ length: 2000 }, (_, i) => random(i % 80))];
  for (const b of inputs) expect(() => sniffMedia(b)).not.toThrow();
  expect(inputs.filter((b) => sniffMedia(b) === null).length).toBeGreaterThan(1000);
});

describe("mp3FrameLength", () => {
  test("MPEG-1 Layer III at 128 kbit/s, 44.1 kHz: 417 bytes, 418 with padding", () => {
    expect(mp3FrameLength(Uint8Array.from(MP3_HEADER), 0)).toBe(417);
    expect(mp3FrameLength(Uint8Array.from([0xff, 0xfb, 0x92, 0x00]), 0)).toBe(418);
  });

  test("MPEG-2 Layer III at 64 kbit/s, 22.05 kHz: 72 × 64000 / 22050 = 208 bytes", () => {
    expect(mp3FrameLength(Uint8Array.from([0xff, 0xf3, 0x80, 0x00]), 0)).toBe(208);
  });

  test("layer II, a free bitrate and a reserved version are not Layer III frames", () => {
    expect(mp3FrameLength(Uint8Array.from([0xff, 0xfd, 0x90, 0x00]), 0)).toBe(0);
    expect(mp3FrameLength(Uint8Array.from([0xff, 0xfb, 0x00, 0x00]), 0)).toBe(0);
    expect(mp3FrameLength(Uint8Array.from([0xff, 0xeb, 0x90, 0x00]), 0)).toBe(0);
  });
});
