// Video sampling: the configured rate, lowered for long videos; frames fitted into the frame size, never enlarged;
// how long sound may be, and when decoded sound ran past it.
import { describe, expect, test } from "bun:test";
import { audioLimitS, fitWithin, ranPast, samplingRate } from "../../../src/media/decode/limits.ts";

describe("samplingRate", () => {
  const limits = { videoFps: 1, videoMaxFrames: 32 };
  test("a short video is sampled at the configured rate", () => {
    expect(samplingRate(10, limits)).toBe(1);
    expect(samplingRate(32, limits)).toBe(1);
  });

  test("a longer one at the rate that spreads the most frames over all of it", () => {
    expect(samplingRate(64, limits)).toBe(0.5);
    expect(samplingRate(320, { videoFps: 2, videoMaxFrames: 32 })).toBe(0.1);
  });

  test("an unknown duration keeps the configured rate", () => {
    expect(samplingRate(0, limits)).toBe(1);
    expect(samplingRate(Number.NaN, limits)).toBe(1);
  });
});

describe("fitWithin", () => {
  test("landscape and portrait fit on their longer side, keeping the aspect ratio", () => {
    expect(fitWithin(1920, 1080, 768)).toEqual({ width: 768, height: 432 });
    expect(fitWithin(1080, 1920, 768)).toEqual({ width: 432, height: 768 });
  });

  test("small frames stay as they are", () => {
    expect(fitWithin(320, 240, 768)).toEqual({ width: 320, height: 240 });
  });

  test("an extreme strip keeps at least one pixel", () => {
    expect(fitWithin(10000, 2, 768)).toEqual({ width: 768, height: 1 });
  });
});

describe("audioLimitS", () => {
  test("audio has the audio limit; a video's sound track the lower of the audio and the video limits", () => {
    expect(audioLimitS({ maxAudioS: 1800, maxVideoS: 300 }, "audio")).toBe(1800);
    expect(audioLimitS({ maxAudioS: 1800, maxVideoS: 300 }, "video")).toBe(300);
    expect(audioLimitS({ maxAudioS: 2, maxVideoS: 10 }, "video")).toBe(2);
  });
});

describe("ranPast", () => {
  test("up to the limit plus a lossy encoder's padding is within it; more is past", () => {
    expect(ranPast(10, 10)).toBe(false);
    expect(ranPast(10.06, 10)).toBe(false);
    expect(ranPast(10.2, 10)).toBe(true);
    expect(ranPast(11, 10)).toBe(true);
  });
});
