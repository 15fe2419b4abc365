// Names a medium from its first bytes (magic numbers), so only formats kiln decodes reach a decoder.
import type { Medium } from "../../inference/media.ts";

/**
 * What the bytes look like. Containers that may hold a picture (mp4, mov, webm, mkv, avi, ogg with theora) are
 * `video`: the decoder's probe finds out whether a picture track is really there.
 */
export interface Sniffed {
  medium: Medium;
  format: string;
}

const ascii = (b: Uint8Array, at: number, text: string): boolean => {
  if (b.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (b[at + i] !== text.charCodeAt(i)) return false;
  return true;
};

const u32be = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;

/** The ISO base media file (mp4, mov, m4a, avif) brands: major and compatible, from the `ftyp` box. */
function ftypBrands(b: Uint8Array): string[] {
  const size = Math.min(u32be(b, 0), b.length, 256);
  const brands: string[] = [];
  for (let at = 8; at + 4 <= size; at += 4) {
    // Bytes 12..16 are the minor version, not a brand.
    if (at === 12) continue;
    brands.push(String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!));
  }
  return brands;
}

const AUDIO_BRANDS = new Set(["M4A ", "M4B ", "M4P ", "F4A ", "F4B "]);

function sniffIsoMedia(b: Uint8Array): Sniffed | null {
  const brands = ftypBrands(b);
  const major = brands[0] ?? "";
  if (major === "avif" || major === "avis" || ((major === "mif1" || major === "msf1") && brands.includes("avif"))) return { medium: "image", format: "avif" };
  // HEIC (HEVC stills): this build of libvips has no HEVC decoder, so it is not a format kiln reads.
  if (["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].includes(major)) return null;
  if (AUDIO_BRANDS.has(major)) return { medium: "audio", format: "m4a" };
  if (major === "qt  ") return { medium: "video", format: "mov" };
  return { medium: "video", format: "mp4" };
}

/** EBML (Matroska, WebM): the DocType element (id 0x4282) in the header says which. */
function sniffEbml(b: Uint8Array): Sniffed {
  const end = Math.min(b.length - 3, 64);
  for (let i = 4; i < end; i++) {
    if (b[i] === 0x42 && b[i + 1] === 0x82) {
      const len = b[i + 2]! & 0x7f;
      if (ascii(b, i + 3, "webm") && len === 4) return { medium: "video", format: "webm" };
      return { medium: "video", format: "mkv" };
    }
  }
  return { medium: "video", format: "mkv" };
}

/** Ogg: the first page's first packet names the codec. */
function sniffOgg(b: Uint8Array): Sniffed {
  const segments = b[26] ?? 0;
  const packet = 27 + segments;
  if (ascii(b, packet, "OpusHead")) return { medium: "audio", format: "opus" };
  if (b[packet] === 0x80 && ascii(b, packet + 1, "theora")) return { medium: "video", format: "ogg" };
  return { medium: "audio", format: "ogg" };
}

const MP3_BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MP3_BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MP3_RATES = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] } as Record<number, number[]>;

/** Length in bytes of the MPEG-1/2/2.5 Layer III frame whose header starts at `at`, or 0 when it is no such header. */
export function mp3FrameLength(b: Uint8Array, at: number): number {
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) return 0;
  const version = (b[at + 1]! >> 3) & 3;
  const layer = (b[at + 1]! >> 1) & 3;
  const bitrateIndex = b[at + 2]! >> 4;
  const rateIndex = (b[at + 2]! >> 2) & 3;
  if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return 0;
  const bitrate = (version === 3 ? MP3_BITRATES_V1 : MP3_BITRATES_V2)[bitrateIndex]! * 1000;
  const rate = MP3_RATES[version]![rateIndex]!;
  const padding = (b[at + 2]! >> 1) & 1;
  return Math.floor(((version === 3 ? 144 : 72) * bitrate) / rate) + padding;
}

/** A Layer III frame at the start, confirmed by a second one right after it when the bytes go that far. */
function isMp3Stream(b: Uint8Array): boolean {
  const first = mp3FrameLength(b, 0);
  if (first === 0) return false;
  return first + 4 > b.length || mp3FrameLength(b, first) > 0;
}

/** ADTS (raw AAC): 12-bit sync, layer 0, a valid sampling index, a frame length that fits its header. */
function isAdts(b: Uint8Array): boolean {
  if (b.length < 7 || b[0] !== 0xff || (b[1]! & 0xf6) !== 0xf0) return false;
  const rateIndex = (b[2]! >> 2) & 0xf;
  const frameLength = ((b[3]! & 3) << 11) | (b[4]! << 3) | (b[5]! >> 5);
  return rateIndex < 13 && frameLength >= 7;
}

/**
 * The medium and format of `bytes`, or null when they start like nothing kiln decodes. Cheap enough for the event
 * loop (it reads a few kilobytes at most) and never throws, so intake can ask it first whether bytes are media at all.
 */
export function sniffMedia(b: Uint8Array): Sniffed | null {
  if (b.length >= 8 && b[0] === 0x89 && ascii(b, 1, "PNG\r\n\x1a\n")) return { medium: "image", format: "png" };
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { medium: "image", format: "jpeg" };
  if (ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a")) return { medium: "image", format: "gif" };
  if (ascii(b, 0, "II*\0") || ascii(b, 0, "MM\0*")) return { medium: "image", format: "tiff" };
  if (ascii(b, 0, "RIFF") || ascii(b, 0, "RF64")) {
    if (ascii(b, 8, "WEBP")) return { medium: "image", format: "webp" };
    if (ascii(b, 8, "WAVE")) return { medium: "audio", format: "wav" };
    if (ascii(b, 8, "AVI ")) return { medium: "video", format: "avi" };
    return null;
  }
  if (ascii(b, 4, "ftyp") && b.length >= 12) return sniffIsoMedia(b);
  // QuickTime files from before `ftyp` start straight with a movie atom.
  if (ascii(b, 4, "moov") || ascii(b, 4, "mdat") || ascii(b, 4, "wide")) return { medium: "video", format: "mov" };
  if (b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return sniffEbml(b);
  if (ascii(b, 0, "fLaC")) return { medium: "audio", format: "flac" };
  if (ascii(b, 0, "OggS")) return sniffOgg(b);
  if (ascii(b, 0, "FORM") && (ascii(b, 8, "AIFF") || ascii(b, 8, "AIFC"))) return { medium: "audio", format: "aiff" };
  if (ascii(b, 0, "ID3")) return { medium: "audio", format: "mp3" };
  if (isMp3Stream(b)) return { medium: "audio", format: "mp3" };
  if (isAdts(b)) return { medium: "audio", format: "aac" };
  return null;
}
