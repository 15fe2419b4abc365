// Image preprocessing in the worker: a picture longer than 8:1 has its middle cut out before the shortest-edge resize,
// so a few-byte 8000×2 PNG costs a small resize, not an 8000-times-wider one; the center crop the encoder sees stays
// within one level of the resize's 8-bit rounding; pictures up to 8:1 are processed exactly as transformers.js does.
import { describe, expect, test } from "bun:test";
import { AutoImageProcessor, RawImage } from "@huggingface/transformers";
import { centralPart, MediaPreprocessor } from "../../workers/text/media-preprocess.ts";
import { noiseImage } from "../helpers/media-fixtures.ts";
import { mediaModelDir } from "./media-models.ts";

const dir = await mediaModelDir("tiny-vision");
const prep = await MediaPreprocessor.load(dir, { image: true, audio: false });
const image = (bytes: Uint8Array) => prep.prepare({ kind: "image", at: 0, tokens: 16, image: { bytes } });

describe("image preprocessing", () => {
  test("an 8000×2 picture becomes the model's 56×56 input from its middle 16×2", async () => {
    const clip = { do_center_crop: true, size: { shortest_edge: 56 } };
    const rgb = (w: number, h: number) => new RawImage(Uint8ClampedArray.from({ length: w * h * 3 }, (_, i) => i % 251), w, h, 3);
    const size = async (w: number, h: number, p: object = clip) => {
      const r = await centralPart(rgb(w, h), p);
      return [r.width, r.height];
    };
    expect(await size(8000, 2)).toEqual([16, 2]);
    // An even margin off each end: the kept part is centred exactly.
    expect(await size(3, 9001)).toEqual([3, 25]);
    expect(await size(800, 100)).toEqual([800, 100]);
    // A processor that squashes to a fixed size (no center crop) sees the whole picture.
    expect(await size(8000, 2, { do_center_crop: false, size: { height: 56, width: 56 } })).toEqual([8000, 2]);
    // The middle is what is kept: column 3992 of the original is column 0 of the cut.
    const cut = await centralPart(rgb(8000, 2), clip);
    expect(cut.data[0]).toBe((3992 * 3) % 251);
    expect((await image(await noiseImage("png", 8000, 2))).dims).toEqual([1, 3, 56, 56]);
  });

  const whole = async (bytes: Uint8Array) => {
    const processor = await AutoImageProcessor.from_pretrained(dir, { local_files_only: true });
    return (await processor(await RawImage.fromBlob(new Blob([bytes as Uint8Array<ArrayBuffer>])))).pixel_values.data as Float32Array;
  };

  test("a 3:1 picture's input is exactly the processor's", async () => {
    const bytes = await noiseImage("png", 300, 100);
    expect((await image(bytes)).data).toEqual(await whole(bytes));
  });

  test("a 20:1 picture's input, from its cut middle, is within one 8-bit level of the processor's over the whole", async () => {
    const bytes = await noiseImage("png", 2000, 100);
    const ours = (await image(bytes)).data;
    const theirs = await whole(bytes);
    // One 8-bit level of the resize, normalised by the smallest CLIP std (0.2613).
    const level = 1 / 255 / 0.26130258 + 1e-6;
    let worst = 0;
    for (let i = 0; i < theirs.length; i++) worst = Math.max(worst, Math.abs(ours[i]! - theirs[i]!));
    expect(worst).toBeLessThanOrEqual(level);
  });
});
