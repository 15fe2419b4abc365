// Tells truncated media from corrupt by its structure: libvips words both the same way, and ffmpeg decodes a cut WAV without a word.

const u32be = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const u32le = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** PNG: walking the chunks (while they look like chunks) runs off the end before IEND. */
function pngEndsEarly(b: Uint8Array): boolean {
  let at = 8;
  while (at + 8 <= b.length) {
    const length = u32be(b, at);
    const type = String.fromCharCode(b[at + 4]!, b[at + 5]!, b[at + 6]!, b[at + 7]!);
    // A chunk type that is not four letters is damage, not a cut: its length means nothing.
    if (!/^[A-Za-z]{4}$/.test(type)) return false;
    const next = at + 12 + length;
    if (next > b.length) return true;
    if (type === "IEND") return false;
    at = next;
  }
  return true;
}

/** JPEG: no end-of-image marker (FF D9) at the end, allowing for trailing padding. */
function jpegEndsEarly(b: Uint8Array): boolean {
  let end = b.length;
  while (end > 2 && (b[end - 1] === 0x00 || b[end - 1] === 0x0a || b[end - 1] === 0x0d)) end--;
  return !(b[end - 2] === 0xff && b[end - 1] === 0xd9);
}

/** WAV: the data chunk declares more bytes than follow it (0 and 0xFFFFFFFF mean a streaming writer did not know). */
function wavEndsEarly(b: Uint8Array): boolean {
  let at = 12;
  while (at + 8 <= b.length) {
    const size = u32le(b, at + 4);
    if (b[at] === 0x64 && b[at + 1] === 0x61 && b[at + 2] === 0x74 && b[at + 3] === 0x61) {
      return size !== 0 && size !== 0xffffffff && at + 8 + size > b.length;
    }
    // Chunks are padded to an even length.
    at += 8 + size + (size & 1);
  }
  return false;
}

/**
 * True when `bytes` of `format` stop before their format's end marker or declared size. Formats without such a
 * marker (tiff, avif; containers ffmpeg checks itself) are never called truncated here.
 */
export function endsEarly(format: string, b: Uint8Array): boolean {
  switch (format) {
    case "png":
      return pngEndsEarly(b);
    case "jpeg":
      return jpegEndsEarly(b);
    case "gif":
      return b[b.length - 1] !== 0x3b;
    case "wav":
      return wavEndsEarly(b);
    case "webp":
      return b.length < 12 || u32le(b, 4) + 8 > b.length;
    default:
      return false;
  }
}
