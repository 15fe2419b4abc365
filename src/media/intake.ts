// Media intake: every media part of a request is read (inline, uploaded file, or fetched URL), checked against the
// content policy, decoded off the event loop, and matched to what the model takes; the prompt text is checked against
// the policy too. Every refusal is a 400 naming the item. It runs before the request is counted or admitted.
import { ApiError } from "../errors/api-error.ts";
import { concat } from "../http/body-reader.ts";
import { type Conversation, type MediaPart, mediaParts, type Part, type TextPart } from "../inference/conversation.ts";
import type { CoreRequest } from "../inference/request.ts";
import type { Capabilities } from "../models/manifest.ts";
import { checkMedium, checkPrompt, type ContentPolicy } from "./content-policy.ts";
import { sniffMedia } from "./decode/sniff.ts";
import { FetchRefusal, MediaDecodeError } from "./types.ts";
import type { DecodedImage, DecodedMedia, Medium } from "../inference/media.ts";

export interface IntakeDeps {
  /** Decodes off the event loop (src/media/decode/). */
  decode(bytes: Uint8Array, want: Medium | "any", signal: AbortSignal): Promise<DecodedMedia>;
  /** Fetches under the fetch policy; throws FetchRefusal. */
  fetch(url: string, signal: AbortSignal): Promise<Uint8Array>;
  /**
   * A file of the caller's team, at most `maxBytes`, if the caller's key may use files; throws ApiError (403 without
   * the files permission, 404 file_not_found, or 400 above the size).
   */
  readFile(who: Caller, fileId: string, maxBytes: number): Promise<Uint8Array>;
  policy: ContentPolicy;
  /** Inline (base64) media above this many decoded bytes are refused: the spec's 50 MB. */
  inlineMaxBytes: number;
  /** Uploaded files above this many bytes are not decoded. */
  fileMaxBytes: number;
  /** Most media parts one request may carry. */
  maxParts: number;
  /** Most bytes of media (all items together) one request may bring. */
  maxTotalBytes: number;
}

/** Who is asking: files are the team's, and the key must be allowed to use them. */
export interface Caller {
  teamId: number;
  keyId: number;
}

/** A text document larger than this fits no model's context: refused before it reaches the prompt. */
export const MAX_TEXT_DOCUMENT_BYTES = 4 * 1024 * 1024;

export interface IntakeModel {
  id: string;
  capabilities: Pick<Capabilities, "vision" | "audio">;
}

const DETAILS = new Set(["auto", "low", "high"]);
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

/** "an image", "an audio clip", "a video". */
function named(m: Medium): string {
  return m === "image" ? "an image" : m === "audio" ? "an audio clip" : "a video";
}

/** Whether the model takes this medium: images and video frames need vision, audio needs audio. */
export function takes(caps: IntakeModel["capabilities"], m: Medium): boolean {
  return m === "audio" ? caps.audio : caps.vision;
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

/** The bytes of an inline part, with the checks that need no decoding; 400 naming the item otherwise. */
export async function inlineBytes(part: MediaPart & { source: { kind: "base64" } }, maxBytes: number): Promise<Uint8Array> {
  const { at, source } = part;
  const size = base64Bytes(source.data);
  if (size > maxBytes) {
    throw ApiError.badRequest(
      `${at} inlines ${size} bytes of media, above the ${maxBytes}-byte limit for inline media; upload it through the Files API and reference its file_id.`,
      at,
    );
  }
  const type = typeof source.mediaType === "string" ? source.mediaType.toLowerCase() : null;
  if (part.declared === "image" && type?.includes("/") && !type.startsWith("image/")) {
    throw ApiError.badRequest(`${at} is a ${type} data URL, not an image; send an image (PNG, JPEG, WebP or GIF).`, at);
  }
  const bytes = await decodeBase64(source.data);
  if (!bytes) throw ApiError.badRequest(`${at} is not valid base64.`, at);
  return bytes;
}

async function bytesOf(deps: IntakeDeps, part: MediaPart, who: Caller, signal: AbortSignal): Promise<Uint8Array> {
  const { source, at } = part;
  if (source.kind === "upload") return source.bytes;
  if (source.kind === "base64") return inlineBytes(part as MediaPart & { source: typeof source }, deps.inlineMaxBytes);
  if (source.kind === "file") {
    try {
      return await deps.readFile(who, source.fileId, deps.fileMaxBytes);
    } catch (e) {
      if (e instanceof ApiError) throw new ApiError(e.status, e.type, `${at}: ${e.message}`, e.code, at);
      throw e;
    }
  }
  try {
    return await deps.fetch(source.url, signal);
  } catch (e) {
    if (e instanceof FetchRefusal) throw ApiError.badRequest(`${at}: ${e.message}`, at);
    throw e;
  }
}

/**
 * An input file no media decoder recognises that is UTF-8 text (no NUL) is a document: its text, framed with its
 * name, for the prompt. null otherwise.
 */
export function textDocument(bytes: Uint8Array, filename: string | undefined): string | null {
  if (bytes.includes(0)) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  return `<file${filename ? ` name=${JSON.stringify(filename)}` : ""}>\n${text}\n</file>`;
}

/** An input file the media sniffer does not recognise: a text document, or 400 naming the item. */
function asDocument(deps: IntakeDeps, part: MediaPart, bytes: Uint8Array): TextPart | null {
  if (!bytes.length) return null;
  const text = textDocument(bytes, part.filename);
  if (text === null) return null;
  if (bytes.length > MAX_TEXT_DOCUMENT_BYTES) {
    throw ApiError.badRequest(`${part.at} is a text document of ${bytes.length} bytes; at most ${MAX_TEXT_DOCUMENT_BYTES} fit a prompt.`, part.at);
  }
  checkPrompt(deps.policy, text, part.at);
  return { type: "text", text };
}

/** Reads, screens and decodes one part: its decoded medium, or (an input file that is text) its text part. */
/** A part's bytes, counted against what is left of the request's media bytes (`what` names them in the refusal). */
async function spend(deps: IntakeDeps, part: MediaPart, who: Caller, signal: AbortSignal, budget: { left: number }, what: string): Promise<Uint8Array> {
  const bytes = await bytesOf(deps, part, who, signal);
  budget.left -= bytes.length;
  if (budget.left < 0) throw ApiError.badRequest(`${part.at} brings the request's ${what} past ${deps.maxTotalBytes} bytes in all; send fewer or smaller ${what}.`, part.at);
  return bytes;
}

/** Decodes an item's bytes and screens them by the content policy; a decode failure is a 400 naming `at`. */
async function decodeScreened(deps: IntakeDeps, bytes: Uint8Array, want: Medium | "any", at: string, signal: AbortSignal): Promise<DecodedMedia> {
  let decoded: DecodedMedia;
  try {
    decoded = await deps.decode(bytes, want, signal);
  } catch (e) {
    if (e instanceof MediaDecodeError) throw ApiError.badRequest(`${at}: ${e.message}`, at);
    throw e;
  }
  checkMedium(deps.policy, decoded.sha256, at);
  return decoded;
}

async function takeOne(deps: IntakeDeps, part: MediaPart, model: IntakeModel, who: Caller, signal: AbortSignal, budget: { left: number }): Promise<MediaPart | TextPart> {
  const { at } = part;
  if (part.detail !== undefined && !DETAILS.has(part.detail)) throw ApiError.badRequest(`${at}.detail must be auto, low or high.`, `${at}.detail`);
  const bytes = await spend(deps, part, who, signal, budget, "media");
  // Text is recognised here, before the decoder takes the bytes (they move to its worker).
  if (part.declared === "file" && !sniffMedia(bytes)) {
    const doc = asDocument(deps, part, bytes);
    if (doc) return doc;
  }
  const decoded = await decodeScreened(deps, bytes, part.declared === "file" ? "any" : part.declared, at, signal);
  if (!takes(model.capabilities, decoded.medium)) {
    throw ApiError.badRequest(`${at} is ${named(decoded.medium)}, but the model '${model.id}' does not take ${decoded.medium} input.`, at);
  }
  return { ...part, decoded };
}

/**
 * One image an images request names (an upload, a file_id, an image_url or a data URL): read under the same limits
 * and fetch policy as a prompt's media, decoded as an image, screened by the content policy; 400 naming `part.at`
 * otherwise. `budget` is what is left of the request's media bytes.
 */
export async function takeImage(deps: IntakeDeps, part: MediaPart, who: Caller, signal: AbortSignal, budget: { left: number }): Promise<DecodedImage> {
  const image = { ...part, declared: "image" as const };
  const bytes = await spend(deps, image, who, signal, budget, "images");
  return (await decodeScreened(deps, bytes, "image", part.at, signal)) as DecodedImage;
}

/**
 * takeImage for each of an images request's images, in order, under the request's byte limit (the caller bounds their
 * count: an edit's images by KILN_MAX_MEDIA_PER_REQUEST, and its mask beside them).
 */
export async function takeImages(deps: IntakeDeps, parts: MediaPart[], who: Caller, signal: AbortSignal): Promise<DecodedImage[]> {
  const budget = { left: deps.maxTotalBytes };
  const out: DecodedImage[] = [];
  for (const part of parts) out.push(await takeImage(deps, part, who, signal, budget));
  return out;
}

/** Every string the client put into the prompt: turns of every role, call arguments, tools, for the prompt patterns. */
export function clientText(request: Pick<CoreRequest, "conversation" | "tools" | "assistantPrefill">): string {
  const out: string[] = [];
  const add = (parts: readonly Part[]) => {
    for (const p of parts) {
      if (p.type === "text" || p.type === "reasoning") out.push(p.text);
      else if (p.type === "tool_call") out.push(p.name, JSON.stringify(p.arguments));
      else if (p.type === "tool_result") add(p.parts);
    }
  };
  for (const turn of request.conversation) add(turn.parts);
  for (const t of request.tools ?? []) out.push(t.function.name, t.function.description ?? "", JSON.stringify(t.function.parameters ?? {}));
  if (request.assistantPrefill) out.push(request.assistantPrefill);
  return out.join("\n");
}

/** Each list of parts that may hold media: the turns', and each tool result's. */
function partLists(conv: Conversation): Part[][] {
  return conv.flatMap((turn) => [turn.parts, ...turn.parts.flatMap((p) => (p.type === "tool_result" ? [p.parts as Part[]] : []))]);
}

/** Screens the request's text and decodes its media in place, in order; the first refusal is thrown. */
export async function takeMedia(deps: IntakeDeps, request: CoreRequest, model: IntakeModel, who: Caller, signal: AbortSignal): Promise<void> {
  if (deps.policy.promptPatterns.length) checkPrompt(deps.policy, clientText(request));
  const conv = request.conversation;
  const parts = mediaParts(conv);
  if (parts.length > deps.maxParts) {
    throw ApiError.badRequest(`The request carries ${parts.length} media items; at most ${deps.maxParts} are read per request (KILN_MAX_MEDIA_PER_REQUEST).`, parts[deps.maxParts]!.at);
  }
  const budget = { left: deps.maxTotalBytes };
  for (const list of partLists(conv)) {
    for (let i = 0; i < list.length; i++) {
      const part = list[i]!;
      if (part.type !== "media") continue;
      if (signal.aborted) return;
      list[i] = await takeOne(deps, part, model, who, signal, budget);
    }
  }
}
