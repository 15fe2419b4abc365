// Image sizes: each aspect ratio's pixel size at the model's budget in its multiples, and a request's size reduced to the nearest ratio.
import { describe, expect, test } from "bun:test";
import { DEFAULT_ASPECT_RATIOS, nearestSize, parseAspectRatio, parseSizeParam, sizeForRatio, supportedSizes } from "../../../src/models/image-sizes.ts";

describe("sizes per aspect ratio", () => {
  test("1:1 is the native square; exact ratios are kept when a multiple pair has them near the budget", () => {
    expect(sizeForRatio("1:1", 512, 32)).toEqual({ ratio: "1:1", width: 512, height: 512 });
    expect(sizeForRatio("2:1", 512, 32)).toEqual({ ratio: "2:1", width: 704, height: 352 });
    expect(sizeForRatio("1:2", 512, 32)).toEqual({ ratio: "1:2", width: 352, height: 704 });
    expect(sizeForRatio("2:1", 128, 16)).toEqual({ ratio: "2:1", width: 192, height: 96 });
  });

  test("every size is in the model's multiples, within 30% of the pixel budget and 10–20% of its ratio (coarse multiples on a small budget)", () => {
    for (const [resolution, multiple] of [[128, 16], [512, 32], [512, 64], [1024, 64]] as const) {
      for (const s of supportedSizes(DEFAULT_ASPECT_RATIOS, resolution, multiple)) {
        const [w, h] = parseAspectRatio(s.ratio);
        expect(s.width % multiple).toBe(0);
        expect(s.height % multiple).toBe(0);
        expect(Math.abs(Math.log((s.width * s.height) / resolution ** 2))).toBeLessThan(Math.log(1.3));
        expect(Math.abs(s.width / s.height / (w / h) - 1)).toBeLessThan(multiple >= 64 && resolution <= 512 ? 0.2 : 0.1);
      }
    }
  });

  test("bad and duplicate ratios are refused", () => {
    expect(() => parseAspectRatio("16/9")).toThrow('aspect ratio "16/9"');
    expect(() => parseAspectRatio("0:1")).toThrow();
    expect(() => supportedSizes(["1:1", "1:1"], 128, 16)).toThrow("listed twice");
    expect(() => supportedSizes([], 128, 16)).toThrow("at least one");
  });
});

describe("a request's size", () => {
  const sizes = supportedSizes(["1:1", "16:9", "9:16", "2:1", "1:2"], 128, 16);
  test("<w>x<h> goes to the nearest ratio in log scale; auto takes the first size", () => {
    expect(nearestSize(sizes, { width: 1024, height: 512 }).ratio).toBe("2:1");
    expect(nearestSize(sizes, { width: 512, height: 1024 }).ratio).toBe("1:2");
    expect(nearestSize(sizes, { width: 1792, height: 1024 }).ratio).toBe("16:9");
    expect(nearestSize(sizes, { width: 1000, height: 1010 }).ratio).toBe("1:1");
    // 3:1 is nearer 2:1 than anything else listed.
    expect(nearestSize(sizes, { width: 3, height: 1 }).ratio).toBe("2:1");
    expect(nearestSize(sizes, null).ratio).toBe("1:1");
  });

  test("the size parameter: <w>x<h> with positive sides, or auto", () => {
    expect(parseSizeParam("1024x512")).toEqual({ width: 1024, height: 512 });
    expect(parseSizeParam("auto")).toBeNull();
    for (const bad of ["1024", "1024X512", "0x512", "-1x5", "1024x512px", "999999x1"]) expect(parseSizeParam(bad)).toBeUndefined();
  });
});
