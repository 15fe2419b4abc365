// Media intake: every media part of a request is read (inline, uploaded file, or fetched URL: intake-read.ts, under the
// request's and the server's byte bounds), checked against the content policy, decoded off the event loop, and matched
// to what the model takes; the prompt text is checked against the policy too. Every refusal is a 400 naming the item
// (503 when the server's intake budget stays spent). It runs before the request is counted or admitted.
import { ApiError } from "../errors/api-error.ts";
import { type Conversation, type MediaPart, mediaParts, type Part, type TextPart } from "../inference/conversation.ts";
import type { CoreRequest } from "../inference/request.ts";
import type { Capabilities } from "../models/manifest.ts";
import { checkMedium, checkPrompt } from "./content-policy.ts";
import { sniffMedia } from "./decode/sniff.ts";
import type { Caller, IntakeDeps } from "./intake-deps.ts";
import { readItem, type RequestBytes } from "./intake-read.ts";
import { oversizeDocument, textDocument } from "./text-document.ts";
import { MediaDecodeError } from "./types.ts";
import type { DecodedImage, DecodedMedia, Medium } from "../inference/media.ts";

export interface IntakeModel {
  id: string;
  capabilities: Pick<Capabilities, "vision" | "audio">;
}

const DETAILS = new Set(["auto", "low", "high"]);

/** "an image", "an audio clip", "a video". */
function named(m: Medium): string {
  return m === "image" ? "an image" : m === "audio" ? "an audio clip" : "a video";
}

/** Whether the model takes this medium: images and video frames need vision, audio needs audio. */
export function takes(caps: IntakeModel["capabilities"], m: Medium): boolean {
  return m === "audio" ? caps.audio : caps.vision;
}

/** An input file the media sniffer does not recognise: a text document, or 400 naming the item. */
function asDocument(deps: IntakeDeps, part: MediaPart, bytes: Uint8Array): TextPart | null {
  if (!bytes.length) return null;
  const text = textDocument(bytes, part.filename);
  if (text === null) return null;
  const tooLarge = oversizeDocument(bytes.length, part.at);
  if (tooLarge) throw tooLarge;
  checkPrompt(deps.policy, text, part.at);
  return { type: "text", text };
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

async function takeOne(deps: IntakeDeps, part: MediaPart, model: IntakeModel, who: Caller, signal: AbortSignal, request: RequestBytes): Promise<MediaPart | TextPart> {
  const { at } = part;
  if (part.detail !== undefined && !DETAILS.has(part.detail)) throw ApiError.badRequest(`${at}.detail must be auto, low or high.`, `${at}.detail`);
  const { bytes, hold } = await readItem(deps, part, who, signal, request, "media");
  let decoded: DecodedMedia;
  try {
    // Text is recognised here, before the decoder takes the bytes (they move to its worker).
    if (part.declared === "file" && !sniffMedia(bytes)) {
      const doc = asDocument(deps, part, bytes);
      if (doc) return doc;
    }
    decoded = await decodeScreened(deps, bytes, part.declared === "file" ? "any" : part.declared, at, signal);
  } finally {
    // The bytes are the decoder's now (or refused): they no longer count against the server's budget.
    hold?.release();
  }
  if (!takes(model.capabilities, decoded.medium)) {
    throw ApiError.badRequest(`${at} is ${named(decoded.medium)}, but the model '${model.id}' does not take ${decoded.medium} input.`, at);
  }
  return { ...part, decoded };
}

/**
 * One image an images request names (an upload, a file_id, an image_url or a data URL): read under the same limits
 * and fetch policy as a prompt's media, decoded as an image, screened by the content policy; 400 naming `part.at`
 * otherwise. `request` is what is left of the request's media bytes.
 */
export async function takeImage(deps: IntakeDeps, part: MediaPart, who: Caller, signal: AbortSignal, request: RequestBytes): Promise<DecodedImage> {
  const image = { ...part, declared: "image" as const };
  const { bytes, hold } = await readItem(deps, image, who, signal, request, "images");
  try {
    return (await decodeScreened(deps, bytes, "image", part.at, signal)) as DecodedImage;
  } finally {
    hold?.release();
  }
}

/**
 * takeImage for each of an images request's images, in order, under the request's byte limit (the caller bounds their
 * count: an edit's images by KILN_MAX_MEDIA_PER_REQUEST, and its mask beside them).
 */
export async function takeImages(deps: IntakeDeps, parts: MediaPart[], who: Caller, signal: AbortSignal): Promise<DecodedImage[]> {
  const request = { left: deps.maxTotalBytes };
  const out: DecodedImage[] = [];
  for (const part of parts) out.push(await takeImage(deps, part, who, signal, request));
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
  const bytes = { left: deps.maxTotalBytes };
  for (const list of partLists(conv)) {
    for (let i = 0; i < list.length; i++) {
      const part = list[i]!;
      if (part.type !== "media") continue;
      if (signal.aborted) return;
      list[i] = await takeOne(deps, part, model, who, signal, bytes);
    }
  }
}
