// Where an edit's images go on the canvas, the latent mask of per-pixel weights, and the overlay that keeps unmasked pixels.
import { describe, expect, test } from "bun:test";
import { fitInside, gridLayout, latentMask, naturalAspect, overlay } from "../../../src/images/layout.ts";

describe("the edit canvas layout", () => {
  test("one image fills the canvas as far as its ratio allows, centred", () => {
    expect(fitInside(1, { x: 0, y: 0, width: 192, height: 96 })).toEqual({ x: 48, y: 0, width: 96, height: 96 });
    expect(fitInside(2, { x: 0, y: 0, width: 192, height: 96 })).toEqual({ x: 0, y: 0, width: 192, height: 96 });
  });

  test("two squares on a 2:1 canvas sit side by side; on a 1:2 canvas one above the other; cells tile without overlap", () => {
    expect(gridLayout([1, 1], 192, 96)).toEqual([{ x: 0, y: 0, width: 96, height: 96 }, { x: 96, y: 0, width: 96, height: 96 }]);
    expect(gridLayout([1, 1], 96, 192)).toEqual([{ x: 0, y: 0, width: 96, height: 96 }, { x: 0, y: 96, width: 96, height: 96 }]);
    const rects = gridLayout([1.5, 0.5, 1, 1, 2], 128, 128);
    expect(rects).toHaveLength(5);
    for (const [i, a] of rects.entries()) {
      expect(a.x + a.width).toBeLessThanOrEqual(128);
      expect(a.y + a.height).toBeLessThanOrEqual(128);
      for (const b of rects.slice(i + 1)) expect(a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y).toBe(true);
    }
  });

  test("an unsized edit keeps the ratio of its images side by side", () => {
    expect(naturalAspect([1, 1])).toBe(2);
    expect(naturalAspect([0.5])).toBe(0.5);
  });
});

describe("masks", () => {
  test("a latent cell may change when any of its pixels may", () => {
    const w = new Float32Array(16 * 8);
    w[3 * 16 + 9] = 0.2; // one pixel in latent cell (x 1, y 0) at scale 8
    expect([...latentMask(w, 16, 8, 8)]).toEqual([0, 1]);
    expect([...latentMask(new Float32Array(16 * 8), 16, 8, 8)]).toEqual([0, 0]);
  });

  test("the overlay takes the render where the weight is 1, keeps the original exactly where it is 0, and blends between", () => {
    const rendered = Uint8Array.from([200, 200, 200, 200, 200, 200, 200, 200, 200]);
    const original = Uint8Array.from([10, 20, 30, 10, 20, 30, 10, 20, 30]);
    expect([...overlay(rendered, original, Float32Array.from([1, 0, 0.5]))]).toEqual([200, 200, 200, 10, 20, 30, 105, 110, 115]);
  });
});
