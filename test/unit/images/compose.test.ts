// Composing an edit's canvas with sharp: images placed whole in their cells on grey, EXIF orientation honoured, a mask's
// transparent pixels (on the first image) becoming the edit weights and the latent mask, and the mask's refusals.
import { describe, expect, test } from "bun:test";
import sharp from "sharp";
import { type CanvasImage, composeCanvas, uprightSize } from "../../../src/images/compose.ts";
import type { DecodedImage } from "../../../src/inference/media.ts";
import { apiRefusal } from "../../helpers/api-refusal.ts";

async function solid(width: number, height: number, rgb: [number, number, number], opts: { alpha?: (x: number, y: number) => number; orientation?: number } = {}): Promise<DecodedImage> {
  const channels = opts.alpha ? 4 : 3;
  const raw = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * channels;
      raw.set(rgb, i);
      if (opts.alpha) raw[i + 3] = opts.alpha(x, y);
    }
  }
  let img = sharp(raw, { raw: { width, height, channels } });
  if (opts.orientation) img = img.jpeg().withMetadata({ orientation: opts.orientation });
  else img = img.png();
  const bytes = new Uint8Array(await img.toBuffer());
  return { medium: "image", format: opts.orientation ? "jpeg" : "png", width, height, bytes, sha256: "" };
}

/** The image as an edit hands it to compose: named, with its upright size. */
async function item(image: DecodedImage, at = "image"): Promise<CanvasImage> {
  return { image, at, size: await uprightSize(image, at) };
}

const pixel = (rgb: Uint8Array, width: number, x: number, y: number) => [...rgb.subarray((y * width + x) * 3, (y * width + x) * 3 + 3)];

describe("the edit canvas", () => {
  test("two squares side by side on a 2:1 canvas, each whole in its half", async () => {
    const red = await solid(40, 40, [255, 0, 0]);
    const blue = await solid(10, 10, [0, 0, 255]);
    const c = await composeCanvas([await item(red), await item(blue)], 32, 16, 8);
    expect([c.width, c.height, c.rgb.length, c.weights, c.latentMask]).toEqual([32, 16, 32 * 16 * 3, null, null]);
    expect(pixel(c.rgb, 32, 3, 8)).toEqual([255, 0, 0]);
    expect(pixel(c.rgb, 32, 28, 8)).toEqual([0, 0, 255]);
  });

  test("one image narrower than the canvas is centred on neutral grey", async () => {
    const c = await composeCanvas([await item(await solid(16, 16, [0, 255, 0]))], 32, 16, 8);
    expect(pixel(c.rgb, 32, 1, 1)).toEqual([128, 128, 128]);
    expect(pixel(c.rgb, 32, 16, 8)).toEqual([0, 255, 0]);
  });

  test("EXIF orientation turns the image upright before it is placed", async () => {
    const rotated = await solid(20, 10, [10, 200, 10], { orientation: 6 });
    expect(await uprightSize(rotated, "image")).toEqual({ width: 10, height: 20 });
  });

  test("a mask: its transparent pixels on the first image may change, everything else is kept; latent cells follow", async () => {
    const img = await solid(16, 16, [200, 100, 50]);
    const mask = await solid(16, 16, [0, 0, 0], { alpha: (x) => (x < 8 ? 0 : 255) });
    const c = await composeCanvas([await item(img), await item(await solid(16, 16, [1, 2, 3]))], 32, 16, 8, await item(mask, "mask"));
    const w = c.weights!;
    expect([w[0], w[7], w[8], w[15], w[16], w[31]]).toEqual([1, 1, 0, 0, 0, 0]);
    expect([...c.latentMask!]).toEqual([1, 0, 0, 0, 1, 0, 0, 0]);
  });

  test("a JPEG with a harmless warning (a stray marker) composes, as intake accepted it; bytes sharp cannot read are a 400 naming the item", async () => {
    const clean = new Uint8Array(await sharp({ create: { width: 64, height: 48, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 40 } } }).jpeg().toBuffer());
    // An RST marker where none belongs, inside the scan: libjpeg warns ("Corrupt JPEG data") and decodes the image.
    const at = Math.floor(clean.length * 0.6);
    const warned = new Uint8Array([...clean.subarray(0, at), 0xff, 0xd3, ...clean.subarray(at)]);
    // sharp's own default (failOn "warning") refuses it: what compose used before.
    expect(await sharp(warned).raw().toBuffer().then(() => "decoded", () => "refused")).toBe("refused");
    const image = { ...(await solid(1, 1, [0, 0, 0])), format: "jpeg", width: 64, height: 48, bytes: warned };
    const c = await composeCanvas([await item(image, "image[0]")], 64, 48, 8);
    expect(c.rgb.length).toBe(64 * 48 * 3);
    const garbage = { ...(await solid(1, 1, [0, 0, 0])), bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]) };
    expect(await apiRefusal(uprightSize(garbage, "images[1].file_id"))).toMatchObject({ status: 400, param: "images[1].file_id", code: null });
  });

  test("a mask without alpha, or of another size than its image, is a 400 naming it", async () => {
    const img = await solid(16, 16, [1, 1, 1]);
    expect(await apiRefusal(composeCanvas([await item(img)], 16, 16, 8, await item(await solid(16, 16, [0, 0, 0]), "mask")))).toMatchObject({ status: 400, param: "mask", message: expect.stringContaining("no alpha channel") });
    expect(await apiRefusal(composeCanvas([await item(img)], 16, 16, 8, await item(await solid(8, 16, [0, 0, 0], { alpha: () => 0 }), "mask.file_id")))).toMatchObject({ status: 400, param: "mask.file_id", message: expect.stringContaining("same size") });
  });
});
