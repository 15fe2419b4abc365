// Media intake: every media part of a request is read (inline, uploaded file, or fetched URL), checked against the
// content policy, decoded off the event loop, and matched to what the model takes; the prompt text is checked against
// the policy too. Every refusal is a 400 naming the item. It runs before the request is counted or admitted.
import { ApiError } from "../errors/api-error.ts";
import { type Conversation, type MediaPart, mediaParts, type Part, type TextPart } from "../inference/conversation.ts";
import type { Capabilities } from "../models/manifest.ts";
import { checkMedium, checkPrompt, type ContentPolicy } from "./content-policy.ts";
import { FetchRefusal, MediaDecodeError } from "./types.ts";
import type { DecodedMedia, Medium } from "../inference/media.ts";

export interface IntakeDeps {
  /** Decodes off the event loop (src/media/decode/). */
  decode(bytes: Uint8Array, want: Medium | "any", signal: AbortSignal): Promise<DecodedMedia>;
  /** Fetches under the fetch policy; throws FetchRefusal. */
  fetch(url: string, signal: AbortSignal): Promise<Uint8Array>;
  /** A file of the team, at most `maxBytes`; throws ApiError (404 file_not_found, or 400 above the size). */
  readFile(teamId: number, fileId: string, maxBytes: number): Promise<Uint8Array>;
  policy: ContentPolicy;
  /** Inline (base64) media above this many decoded bytes are refused: the spec's 50 MB. */
  inlineMaxBytes: number;
  /** Uploaded files above this many bytes are not decoded. */
  fileMaxBytes: number;
  /** Most media parts one request may carry. */
  maxParts: number;
}

export interface IntakeModel {
  id: string;
  capabilities: Pick<Capabilities, "vision" | "audio">;
}

const DETAILS = new Set(["auto", "low", "high"]);
/** Strict base64 (or base64url) to bytes in one pass (TC39 `Uint8Array.fromBase64`, which Bun has); null when invalid. */
const fromBase64 = (Uint8Array as unknown as { fromBase64(s: string, o?: { alphabet: "base64" | "base64url" }): Uint8Array }).fromBase64;
function decodeBase64(data: string): Uint8Array | null {
  for (const alphabet of ["base64", "base64url"] as const) {
    try {
      return fromBase64(data, { alphabet });
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
  const clean = data.length - (data.match(/\s/g)?.length ?? 0);
  const pad = data.trimEnd().endsWith("==") ? 2 : data.trimEnd().endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean * 3) / 4) - pad);
}

/** The bytes of an inline part, with the checks that need no decoding; 400 naming the item otherwise. */
export function inlineBytes(part: MediaPart & { source: { kind: "base64" } }, maxBytes: number): Uint8Array {
  const { at, source } = part;
  const size = base64Bytes(source.data);
  if (size > maxBytes) {
    throw ApiError.badRequest(
      `${at} inlines ${size} bytes of media, above the ${maxBytes}-byte limit for inline media; upload it through the Files API and reference its file_id.`,
      at,
    );
  }
  const type = source.mediaType?.toLowerCase() ?? null;
  if (part.declared === "image" && type?.includes("/") && !type.startsWith("image/")) {
    throw ApiError.badRequest(`${at} is a ${type} data URL, not an image; send an image (PNG, JPEG, WebP or GIF).`, at);
  }
  const bytes = decodeBase64(source.data);
  if (!bytes) throw ApiError.badRequest(`${at} is not valid base64.`, at);
  return bytes;
}

async function bytesOf(deps: IntakeDeps, part: MediaPart, teamId: number, signal: AbortSignal): Promise<Uint8Array> {
  const { source, at } = part;
  if (source.kind === "base64") return inlineBytes(part as MediaPart & { source: typeof source }, deps.inlineMaxBytes);
  if (source.kind === "file") {
    try {
      return await deps.readFile(teamId, source.fileId, deps.fileMaxBytes);
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

/** Reads, screens and decodes one part: its decoded medium, or (an input file that is text) its text part. */
async function takeOne(deps: IntakeDeps, part: MediaPart, model: IntakeModel, teamId: number, signal: AbortSignal): Promise<MediaPart | TextPart> {
  const { at } = part;
  if (part.detail !== undefined && !DETAILS.has(part.detail)) throw ApiError.badRequest(`${at}.detail must be auto, low or high.`, `${at}.detail`);
  const bytes = await bytesOf(deps, part, teamId, signal);
  let decoded: DecodedMedia;
  try {
    decoded = await deps.decode(bytes, part.declared === "file" ? "any" : part.declared, signal);
  } catch (e) {
    if (!(e instanceof MediaDecodeError)) throw e;
    const text = part.declared === "file" && e.reason === "unknown_format" ? textDocument(bytes, part.filename) : null;
    if (text === null) throw ApiError.badRequest(`${at}: ${e.message}`, at);
    if (deps.policy.promptPatterns.length) checkPrompt(deps.policy, text, at);
    return { type: "text", text };
  }
  checkMedium(deps.policy, decoded.sha256, at);
  if (!takes(model.capabilities, decoded.medium)) {
    throw ApiError.badRequest(`${at} is ${named(decoded.medium)}, but the model '${model.id}' does not take ${decoded.medium} input.`, at);
  }
  return { ...part, decoded };
}

/** The text the client wrote (system, user and tool turns), for the prompt patterns. */
function clientText(conv: Conversation): string {
  const out: string[] = [];
  for (const turn of conv) {
    if (turn.role === "assistant") continue;
    for (const p of turn.parts) {
      if (p.type === "text") out.push(p.text);
      else if (p.type === "tool_result") for (const q of p.parts) if (q.type === "text") out.push(q.text);
    }
  }
  return out.join("\n");
}

/** Each list of parts that may hold media: the turns', and each tool result's. */
function partLists(conv: Conversation): Part[][] {
  return conv.flatMap((turn) => [turn.parts, ...turn.parts.flatMap((p) => (p.type === "tool_result" ? [p.parts as Part[]] : []))]);
}

/** Screens the conversation and decodes its media in place, in order; the first refusal is thrown. */
export async function takeMedia(deps: IntakeDeps, conv: Conversation, model: IntakeModel, teamId: number, signal: AbortSignal): Promise<void> {
  if (deps.policy.promptPatterns.length) checkPrompt(deps.policy, clientText(conv));
  const count = mediaParts(conv).length;
  if (count > deps.maxParts) {
    throw ApiError.badRequest(`The request carries ${count} media items; at most ${deps.maxParts} are read per request (KILN_MAX_MEDIA_PER_REQUEST).`, mediaParts(conv)[deps.maxParts]!.at);
  }
  for (const list of partLists(conv)) {
    for (let i = 0; i < list.length; i++) {
      const part = list[i]!;
      if (part.type !== "media") continue;
      if (signal.aborted) return;
      list[i] = await takeOne(deps, part, model, teamId, signal);
    }
  }
}
