// Reading the PPM frames ffmpeg writes.
import { expect, test } from "bun:test";
import { readPpm } from "../../../src/media/decode/ppm.ts";

const ppm = (header: string, pixels: number[]) => Uint8Array.from([...new TextEncoder().encode(header), ...pixels]);

test("reads the size and hands back the packed RGB without copying", () => {
  const bytes = ppm("P6\n2 1\n255\n", [1, 2, 3, 4, 5, 6]);
  const image = readPpm(bytes)!;
  expect([image.width, image.height, [...image.rgb]]).toEqual([2, 1, [1, 2, 3, 4, 5, 6]]);
  expect(image.rgb.buffer).toBe(bytes.buffer);
});

test("comments and other whitespace in the header", () => {
  expect(readPpm(ppm("P6 # made by kiln\n1\t1 255\n", [9, 8, 7]))?.rgb).toEqual(Uint8Array.from([9, 8, 7]));
});

test("pixel bytes that look like header digits are pixels", () => {
  expect([...readPpm(ppm("P6\n1 1\n255\n", [0x32, 0x35, 0x35]))!.rgb]).toEqual([0x32, 0x35, 0x35]);
});

test("not P6, 16-bit, missing pixels or a zero size: null", () => {
  expect(readPpm(ppm("P3\n1 1\n255\n", [1, 2, 3]))).toBeNull();
  expect(readPpm(ppm("P6\n1 1\n65535\n", [1, 2, 3, 4, 5, 6]))).toBeNull();
  expect(readPpm(ppm("P6\n2 2\n255\n", [1, 2, 3]))).toBeNull();
  expect(readPpm(ppm("P6\n0 1\n255\n", []))).toBeNull();
  expect(readPpm(ppm("P6\nx 1\n255\n", [1, 2, 3]))).toBeNull();
});
