// RGB bytes ⇄ the VAE's planar [-1, 1] images.
import { describe, expect, test } from "bun:test";
import { allFinite, planesToRgb, rgbToPlanes } from "../../../../workers/image/pixels.ts";

describe("pixels", () => {
  test("packed RGB becomes planes in [-1, 1]", () => {
    const planes = rgbToPlanes(Uint8Array.of(0, 255, 51, 255, 0, 102), 2, 1);
    expect(Array.from(planes)).toEqual([-1, 1, 1, -1, Math.fround(-0.6), Math.fround(-0.2)]);
    expect(() => rgbToPlanes(new Uint8Array(5), 2, 1)).toThrow("expected 6");
  });

  test("planes become packed RGB: clamped, scaled, rounded half to even", () => {
    // planes R = [-2, 2], G = [0, -0.5], B = [0.1, 1]; (s + 1)/2·255 at s = 0 is exactly 127.5 → 128 (even)
    const planes = Float32Array.of(-2, 2, 0, -0.5, 0.1, 1);
    expect(Array.from(planesToRgb(planes, 2, 1)!)).toEqual([0, 128, 140, 255, 64, 255]);
  });

  test("round trip of every byte value", () => {
    const rgb = Uint8Array.from({ length: 256 * 3 }, (_, i) => i % 256);
    expect(planesToRgb(rgbToPlanes(rgb, 256, 1), 256, 1)).toEqual(rgb);
  });

  test("a non-finite value fails the image", () => {
    expect(planesToRgb(Float32Array.of(0, NaN, 0), 1, 1)).toBeNull();
    expect(allFinite([1, 2])).toBe(true);
    expect(allFinite([1, Infinity])).toBe(false);
  });
});
