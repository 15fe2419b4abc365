// Reading `data:` URLs (RFC 2397) as clients send inline media: the declared type and the payload as base64.
import type { MediaSource } from "../inference/conversation.ts";

export interface DataUrl {
  /** Lower-cased, parameters dropped; "text/plain" when the URL names none, as RFC 2397 says. */
  mediaType: string;
  /** The payload as base64, whether the URL carried base64 or percent-encoded bytes. */
  base64: string;
}

/** A data URL's parts; null when `url` is not a well-formed data URL. */
export function parseDataUrl(url: string): DataUrl | null {
  if (!/^data:/i.test(url)) return null;
  const comma = url.indexOf(",");
  if (comma < 0) return null;
  const params = url.slice(5, comma).split(";").map((p) => p.trim());
  const isBase64 = params.length > 1 && params[params.length - 1]!.toLowerCase() === "base64";
  const type = (params[0] || "text/plain").toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type)) return null;
  const payload = url.slice(comma + 1);
  if (isBase64) return { mediaType: type, base64: payload };
  const bytes = percentDecode(payload);
  return bytes && { mediaType: type, base64: bytes.toString("base64") };
}

/**
 * A percent-encoded payload's bytes: each `%XX` is the byte XX (not part of a UTF-8 text), any other character its
 * UTF-8 bytes; null when a `%` is not followed by two hex digits. Decoded in place: the output never outgrows the input.
 */
function percentDecode(payload: string): Buffer | null {
  const buf = Buffer.from(payload, "utf8");
  let out = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] !== 0x25) {
      buf[out++] = buf[i]!;
      continue;
    }
    const hi = hexValue(buf[i + 1]);
    const lo = hexValue(buf[i + 2]);
    if (hi < 0 || lo < 0) return null;
    buf[out++] = hi * 16 + lo;
    i += 2;
  }
  return buf.subarray(0, out);
}

/** The value of one ASCII hex digit, or -1. */
function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * A URL a client gave for a medium: a data URL becomes inline bytes with its declared type; anything else stays a
 * reference the fetch policy judges. A malformed data URL stays a "url" whose scheme the policy refuses by name.
 */
export function sourceFromUrl(url: string): MediaSource {
  const d = parseDataUrl(url);
  return d ? { kind: "base64", mediaType: d.mediaType, data: d.base64 } : { kind: "url", url };
}

/** An input file's inline data: a data URL, or bare base64 with no declared type. */
export function sourceFromFileData(data: string): MediaSource {
  return data.startsWith("data:") ? sourceFromUrl(data) : { kind: "base64", mediaType: null, data };
}
