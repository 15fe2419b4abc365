// Reads one media item's bytes (inline, uploaded, a file by id, or fetched) under the request's byte limit and the
// server's intake budget. Each item's size is known before its bytes are read or decoded (a file's from its stored
// record, an inline one's from its base64 length; a fetch reserves the fetch limit until its size is known), so a
// refusal costs no read. A file's first bytes are read first: a text document too large for a prompt, or bytes no
// decoder takes, are refused from them without reading the rest.
import { ApiError } from "../errors/api-error.ts";
import { concat } from "../http/body-reader.ts";
import type { MediaPart } from "../inference/conversation.ts";
import { precheck } from "./decode/precheck.ts";
import { sniffMedia } from "./decode/sniff.ts";
import type { Reservation } from "./intake-budget.ts";
import type { Caller, IntakeDeps } from "./intake-deps.ts";
import { looksLikeText, oversizeDocument } from "./text-document.ts";
import { FetchRefusal, MediaDecodeError } from "./types.ts";

/** An item's bytes, and what they hold of the server's budget until the decoder has taken them (none: already held). */
export interface HeldBytes {
  bytes: Uint8Array;
  hold: Reservation | null;
}

/** What is left of the request's media bytes. */
export interface RequestBytes {
  left: number;
}

/** How much of a file is read to tell what it is: sniffing needs a few kilobytes. */
export const HEAD_BYTES = 64 * 1024;

/** TC39 `Uint8Array.fromBase64` (Bun has it): strict, throws on any character outside the alphabet. */
const fromBase64 = (Uint8Array as unknown as { fromBase64(s: string, o?: { alphabet: "base64" | "base64url" }): Uint8Array }).fromBase64;
/** Characters decoded between two turns of the event loop (a multiple of 4): about 4 ms each. */
const BASE64_CHUNK = 4 * 1024 * 1024;

/**
 * Strict base64 (or base64url) to bytes, a chunk at a time with the event loop let in between, so 50 MB of inline
 * media never stalls other requests for long; null when the text is not valid base64.
 */
export async function decodeBase64(data: string): Promise<Uint8Array | null> {
  const clean = /\s/.test(data) ? data.replace(/\s+/g, "") : data;
  for (const alphabet of ["base64", "base64url"] as const) {
    try {
      const parts: Uint8Array[] = [];
      let size = 0;
      for (let i = 0; i < clean.length; i += BASE64_CHUNK) {
        if (i) await new Promise<void>((resolve) => setImmediate(resolve));
        const part = fromBase64(clean.slice(i, i + BASE64_CHUNK), { alphabet });
        parts.push(part);
        size += part.length;
      }
      return concat(parts, size);
    } catch {
      // Not this alphabet: try the other, then give up.
    }
  }
  return null;
}

/** Decoded size of a base64 string, without decoding it. */
export function base64Bytes(data: string): number {
  let chars = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data.charCodeAt(i);
    // Whitespace (space, tab, CR, LF, FF) and "=" padding carry no bits; every other character carries six.
    if (c !== 61 && c !== 32 && (c < 9 || c > 13)) chars++;
  }
  return Math.floor((chars * 6) / 8);
}

/** Counts `size` against the request's media bytes; past `deps.maxTotalBytes` in all, a 400 naming the item. */
function count(deps: IntakeDeps, at: string, size: number, request: RequestBytes, what: string): void {
  request.left -= size;
  if (request.left < 0) throw ApiError.badRequest(`${at} brings the request's ${what} past ${deps.maxTotalBytes} bytes in all; send fewer or smaller ${what}.`, at);
}

/** Runs `read` under `hold`, which is given back if the read fails. */
async function holding(hold: Reservation, read: () => Promise<Uint8Array>): Promise<HeldBytes> {
  try {
    return { bytes: await read(), hold };
  } catch (e) {
    hold.release();
    throw e;
  }
}

/** An ApiError from a file read, its message and param naming the item. */
async function naming<T>(at: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof ApiError) throw new ApiError(e.status, e.type, `${at}: ${e.message}`, e.code, at);
    throw e;
  }
}

/** The bytes of an inline part, with the checks that need no decoding; 400 naming the item otherwise. */
async function inlineBytes(deps: IntakeDeps, part: MediaPart & { source: { kind: "base64" } }, request: RequestBytes, what: string, signal: AbortSignal): Promise<HeldBytes> {
  const { at, source } = part;
  const size = base64Bytes(source.data);
  if (size > deps.inlineMaxBytes) {
    throw ApiError.badRequest(
      `${at} inlines ${size} bytes of media, above the ${deps.inlineMaxBytes}-byte limit for inline media; upload it through the Files API and reference its file_id.`,
      at,
    );
  }
  const type = typeof source.mediaType === "string" ? source.mediaType.toLowerCase() : null;
  if (part.declared === "image" && type?.includes("/") && !type.startsWith("image/")) {
    throw ApiError.badRequest(`${at} is a ${type} data URL, not an image; send an image (PNG, JPEG, WebP or GIF).`, at);
  }
  count(deps, at, size, request, what);
  return holding(await deps.budget.take(size, signal), async () => {
    const bytes = await decodeBase64(source.data);
    if (!bytes) throw ApiError.badRequest(`${at} is not valid base64.`, at);
    return bytes;
  });
}

/** What a file's first bytes already tell: a text document too large for a prompt, or bytes no decoder takes. */
function checkHead(part: MediaPart, head: Uint8Array, size: number): void {
  if (part.declared === "file" && !sniffMedia(head) && looksLikeText(head, head.length === size)) {
    const tooLarge = oversizeDocument(size, part.at);
    if (tooLarge) throw tooLarge;
    return;
  }
  try {
    precheck(head, part.declared === "file" ? "any" : part.declared);
  } catch (e) {
    if (e instanceof MediaDecodeError) throw ApiError.badRequest(`${part.at}: ${e.message}`, part.at);
    throw e;
  }
}

/** A file of the team by id: opened (its size from the record), its head checked, then read whole under the budget. */
async function fileBytes(deps: IntakeDeps, part: MediaPart, fileId: string, who: Caller, request: RequestBytes, what: string, signal: AbortSignal): Promise<HeldBytes> {
  const { at } = part;
  const file = await naming(at, () => deps.openFile(who, fileId, deps.fileMaxBytes));
  count(deps, at, file.size, request, what);
  const head = await naming(at, () => file.head(HEAD_BYTES));
  checkHead(part, head, file.size);
  const hold = await deps.budget.take(file.size, signal);
  // A small file's head is all of it: not read twice.
  return holding(hold, async () => (head.length === file.size ? head : naming(at, () => file.bytes(signal))));
}

/** A remote medium: the fetch limit is reserved while it downloads, then only its size. */
async function fetchedBytes(deps: IntakeDeps, at: string, url: string, request: RequestBytes, what: string, signal: AbortSignal): Promise<HeldBytes> {
  const hold = await deps.budget.take(deps.fetchMaxBytes, signal);
  const held = await holding(hold, async () => {
    try {
      return await deps.fetch(url, signal);
    } catch (e) {
      if (e instanceof FetchRefusal) throw ApiError.badRequest(`${at}: ${e.message}`, at);
      throw e;
    }
  });
  hold.shrink(held.bytes.length);
  try {
    count(deps, at, held.bytes.length, request, what);
  } catch (e) {
    hold.release();
    throw e;
  }
  return held;
}

/**
 * The bytes of one item, counted against the request's media bytes (`what` names them in the refusal) and held
 * against the server's budget; the caller releases `hold` once the decoder has the bytes.
 */
export async function readItem(deps: IntakeDeps, part: MediaPart, who: Caller, signal: AbortSignal, request: RequestBytes, what: string): Promise<HeldBytes> {
  const { source, at } = part;
  if (source.kind === "upload") {
    count(deps, at, source.bytes.length, request, what);
    return { bytes: source.bytes, hold: null };
  }
  if (source.kind === "base64") return inlineBytes(deps, part as MediaPart & { source: typeof source }, request, what, signal);
  if (source.kind === "file") return fileBytes(deps, part, source.fileId, who, request, what, signal);
  return fetchedBytes(deps, at, source.url, request, what, signal);
}
