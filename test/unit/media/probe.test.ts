// Reading ffprobe's report and ffmpeg's messages: tracks, sizes, durations, and when a decode stopped early.
import { describe, expect, test } from "bun:test";
import { fellShort, mentionsTruncation, monoMix, readProbe } from "../../../src/media/decode/probe.ts";

const report = (streams: object[], duration = "5.000000") => JSON.stringify({ streams, format: { format_name: "mov,mp4", duration } });

describe("readProbe", () => {
  test("a video with sound: size and each track's duration", () => {
    const r = readProbe(report([{ codec_type: "video", width: 320, height: 240, duration: "4.960000" }, { codec_type: "audio", duration: "5.000000", channels: 2 }]));
    expect(r).toEqual({ video: { width: 320, height: 240, durationS: 4.96 }, audio: { durationS: 5, channels: 2 }, durationS: 5 });
  });

  test("cover art attached to audio is not a picture track", () => {
    const r = readProbe(report([{ codec_type: "audio", channels: 1 }, { codec_type: "video", width: 600, height: 600, disposition: { attached_pic: 1 } }]));
    expect(r).toEqual({ video: null, audio: { durationS: 5, channels: 1 }, durationS: 5 });
  });

  test("Matroska track durations come from the DURATION tag", () => {
    const r = readProbe(report([{ codec_type: "video", width: 64, height: 48, tags: { DURATION: "00:01:02.500000000" } }, { codec_type: "audio", tags: { DURATION: "00:00:03.250000000" } }]));
    expect(r?.video?.durationS).toBe(62.5);
    expect(r?.audio?.durationS).toBe(3.25);
  });

  test("an audio track of a video without its own duration does not borrow the container's (the video may be longer)", () => {
    expect(readProbe(report([{ codec_type: "video", width: 64, height: 48 }, { codec_type: "audio" }]))?.audio).toEqual({ durationS: null, channels: 0 });
  });

  test("a rotated phone video reports its displayed size", () => {
    const side = readProbe(report([{ codec_type: "video", width: 1920, height: 1080, side_data_list: [{ rotation: -90 }] }]));
    expect(side?.video).toMatchObject({ width: 1080, height: 1920 });
    const tagged = readProbe(report([{ codec_type: "video", width: 1920, height: 1080, tags: { rotate: "270" } }]));
    expect(tagged?.video).toMatchObject({ width: 1080, height: 1920 });
    const upsideDown = readProbe(report([{ codec_type: "video", width: 1920, height: 1080, side_data_list: [{ rotation: 180 }] }]));
    expect(upsideDown?.video).toMatchObject({ width: 1920, height: 1080 });
  });

  test("no report (ffprobe could not read the input) is null", () => {
    expect(readProbe("")).toBeNull();
    expect(readProbe("{}")).toBeNull();
    expect(readProbe("{\n")).toBeNull();
  });

  test("a nonsense duration is unknown, not a number", () => {
    expect(readProbe(report([{ codec_type: "audio", duration: "N/A" }], "N/A"))).toEqual({ video: null, audio: { durationS: null, channels: 0 }, durationS: null });
  });
});

describe("mentionsTruncation", () => {
  test("ffmpeg's words for input that stops early", () => {
    expect(mentionsTruncation(["[mov,mp4,m4a,3gp,3g2,mj2 @ 0x1] moov atom not found", "in: Invalid data found"])).toBe(true);
    expect(mentionsTruncation(["[matroska,webm @ 0x1] File ended prematurely"])).toBe(true);
    expect(mentionsTruncation(["[wav @ 0x1] Invalid sample rate: -1", "in: Invalid data found when processing input"])).toBe(false);
  });
});

describe("fellShort", () => {
  test("well under the stated duration is short; within the estimate's margin is not", () => {
    expect(fellShort(1.0, 3.0)).toBe(true);
    expect(fellShort(2.9, 3.0)).toBe(false);
    expect(fellShort(2.2, 3.0)).toBe(false);
  });

  test("an unknown or tiny stated duration proves nothing", () => {
    expect(fellShort(0.1, null)).toBe(false);
    expect(fellShort(0.1, 0.4)).toBe(false);
  });
});

describe("monoMix", () => {
  test("the mean of every channel, whatever their number", () => {
    expect(monoMix(2)).toBe("pan=mono|c0=0.500000*c0+0.500000*c1");
    expect(monoMix(6)).toBe(`pan=mono|c0=${[0, 1, 2, 3, 4, 5].map((i) => `0.166667*c${i}`).join("+")}`);
  });

  test("mono, or a count ffprobe did not give, is left to ffmpeg's own mix", () => {
    expect(monoMix(1)).toBe("aformat=channel_layouts=mono");
    expect(monoMix(0)).toBe("aformat=channel_layouts=mono");
  });
});
