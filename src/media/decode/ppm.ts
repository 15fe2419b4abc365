// Reads a binary PPM (P6) frame as ffmpeg writes it: the header gives the size, the rest is packed RGB.

export interface PpmImage {
  width: number;
  height: number;
  /** Packed RGB, a view into the input (no copy). */
  rgb: Uint8Array;
}

/** The image in `bytes`, or null when they are not a complete 8-bit P6 file. */
export function readPpm(bytes: Uint8Array): PpmImage | null {
  if (bytes[0] !== 0x50 || bytes[1] !== 0x36) return null;
  const fields: number[] = [];
  let at = 2;
  while (fields.length < 3 && at < bytes.length) {
    const c = bytes[at]!;
    if (c === 0x23) {
      // A comment runs to the end of its line.
      while (at < bytes.length && bytes[at] !== 0x0a) at++;
    } else if (c >= 0x30 && c <= 0x39) {
      let n = 0;
      while (at < bytes.length && bytes[at]! >= 0x30 && bytes[at]! <= 0x39) n = n * 10 + bytes[at++]! - 0x30;
      fields.push(n);
      continue;
    } else if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
      return null;
    }
    at++;
  }
  // One whitespace byte separates the header from the pixels.
  at++;
  const [width, height, max] = fields;
  if (fields.length < 3 || max !== 255 || !width || !height) return null;
  const size = width * height * 3;
  if (bytes.length - at < size) return null;
  return { width, height, rgb: bytes.subarray(at, at + size) };
}
