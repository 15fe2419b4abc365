// Telling a cut file from a broken one by its structure: end markers and declared sizes.
import { describe, expect, test } from "bun:test";
import { endsEarly } from "../../../src/media/decode/truncation.ts";
import { noiseImage, sine, wavBytes } from "../../helpers/media-fixtures.ts";

describe("endsEarly", () => {
  test.each(["png", "jpeg", "gif", "webp"] as const)("a whole %s does not; the same cut at any of several points does", async (format) => {
    const whole = await noiseImage(format);
    expect(endsEarly(format, whole)).toBe(false);
    for (const keep of [0.3, 0.6, 0.95]) expect(endsEarly(format, whole.subarray(0, Math.floor(whole.length * keep)))).toBe(true);
  });

  test("a JPEG padded after its end marker is whole", async () => {
    const jpeg = await noiseImage("jpeg");
    expect(endsEarly("jpeg", Uint8Array.from([...jpeg, 0, 0, 0x0a]))).toBe(false);
  });

  test("a PNG whose chunks are intact but lack IEND ends early", async () => {
    const png = await noiseImage("png");
    expect(endsEarly("png", png.subarray(0, png.length - 12))).toBe(true);
  });

  test("WAV: a data chunk declaring more than follows ends early; unknown sizes (0, 0xFFFFFFFF) do not", () => {
    const wav = wavBytes(sine(440, 0.5, 8000), 8000);
    expect(endsEarly("wav", wav)).toBe(false);
    expect(endsEarly("wav", wav.subarray(0, wav.length - 100))).toBe(true);
    for (const unknown of [0, 0xffffffff]) {
      const streamed = wav.slice(0, wav.length - 100);
      new DataView(streamed.buffer).setUint32(40, unknown, true);
      expect(endsEarly("wav", streamed)).toBe(false);
    }
  });

  test("formats without an end marker are never called truncated", () => {
    expect(endsEarly("tiff", new Uint8Array([0x49, 0x49, 0x2a, 0]))).toBe(false);
    expect(endsEarly("mp4", new Uint8Array(10))).toBe(false);
  });
});

test("bytes after a PNG signature that are not chunks are damage, not a cut", () => {
  const damaged = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03, 0x04, 0, 0, 0]);
  expect(endsEarly("png", damaged)).toBe(false);
});
