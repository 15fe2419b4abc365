// Media in the prompt: what the chat template writes for each decoded medium (one placeholder per image, per video
// frame, per audio clip), and the expansion of those placeholder tokens into the encoder rows the worker fills in.
import { ApiError } from "../errors/api-error.ts";
import { audioPieces, type MediaLayout } from "../models/media-layout.ts";
import type { MediaInput } from "../protocol/text.ts";
import type { MediaPart } from "./conversation.ts";
import type { DecodedAudio } from "./media.ts";

/** An encoder input before expansion gives it its prompt index. */
export type UnplacedInput = MediaInput extends infer T ? (T extends MediaInput ? Omit<T, "at"> : never) : never;

/** One placeholder the template writes, and the inputs (one per encoder pass) its token becomes. */
export interface MediaSlot {
  kind: "image" | "audio";
  /** Encoder inputs in prompt order; `at` is filled in by expansion. */
  inputs: UnplacedInput[];
}

function audioSlot(layout: MediaLayout, audio: DecodedAudio): MediaSlot {
  const a = layout.audio!;
  const inputs = audioPieces(a, audio.samples.length).map((p): UnplacedInput => {
    // A copy of its own for each piece: a worker message copies a view's whole buffer, the rest of the clip included.
    const samples = new Float32Array(p.length);
    samples.set(audio.samples.subarray(p.start, p.end));
    return { kind: "audio", tokens: p.tokens, samples, sampleRate: audio.sampleRate };
  });
  return { kind: "audio", inputs };
}

/**
 * The placeholders one decoded media part takes in a model with this layout, in order: an image is one, audio one
 * (split into encoder pieces), a video one per sampled frame then one for its sound track when the model hears.
 * Intake has already refused what the model cannot take, so a missing side here means the medium is skipped only
 * for a video's sound on a model without audio.
 */
export function mediaSlots(layout: MediaLayout, part: MediaPart): MediaSlot[] {
  const d = part.decoded;
  if (!d) throw new Error(`media part ${part.at} reached the prompt undecoded`);
  const image = layout.image;
  if (d.medium === "image") {
    if (!image) throw ApiError.badRequest(`${part.at}: this model does not take image input.`, part.at);
    return [{ kind: "image", inputs: [{ kind: "image", tokens: image.tokens, image: { bytes: d.bytes } }] }];
  }
  if (d.medium === "audio") {
    if (!layout.audio) throw ApiError.badRequest(`${part.at}: this model does not take audio input.`, part.at);
    return [audioSlot(layout, d)];
  }
  if (!image) throw ApiError.badRequest(`${part.at}: this model does not take video input (it has no vision).`, part.at);
  const frames = d.frames.map((f): MediaSlot => ({ kind: "image", inputs: [{ kind: "image", tokens: image.tokens, image: { rgb: f.rgb, width: f.width, height: f.height } }] }));
  return d.audio && layout.audio ? [...frames, audioSlot(layout, d.audio)] : frames;
}

/** Prompt rows the slots take once expanded. */
export function slotTokens(slots: readonly MediaSlot[]): number {
  let n = 0;
  for (const s of slots) for (const i of s.inputs) n += i.tokens;
  return n;
}

/**
 * Replaces each placeholder token of `ids` (in order) by its slot's rows: the run of placeholder ids the worker
 * overwrites with encoder features, one input after another. The template must have written exactly one placeholder
 * per slot, of the slot's kind: a client's text that holds a placeholder's text, or a template that drops media,
 * is refused rather than misplaced.
 */
export function expandPlaceholders(ids: readonly number[], layout: MediaLayout, slots: readonly MediaSlot[]): { promptIds: number[]; media: MediaInput[] } {
  const imageId = layout.image?.tokenId ?? -1;
  const audioId = layout.audio?.tokenId ?? -1;
  const promptIds: number[] = [];
  const media: MediaInput[] = [];
  let next = 0;
  for (const id of ids) {
    if (id !== imageId && id !== audioId) {
      promptIds.push(id);
      continue;
    }
    const slot = slots[next++];
    const kind = id === imageId ? "image" : "audio";
    if (!slot || slot.kind !== kind) throw misplaced(layout, slots.length);
    for (const input of slot.inputs) {
      media.push({ ...input, at: promptIds.length });
      for (let i = 0; i < input.tokens; i++) promptIds.push(id);
    }
  }
  if (next !== slots.length) throw misplaced(layout, slots.length);
  return { promptIds, media };
}

/**
 * Text kiln itself puts in the prompt (a built-in tool's result, such as a web page's snippet) with the model's
 * placeholder texts broken by a word joiner: the tokenizer then reads them as text, not as media rows nothing fills
 * (which would refuse the request mid-stream). A client's own text is not changed: there a placeholder is refused.
 */
export function inertPlaceholders(text: string, layout: MediaLayout | null): string {
  let out = text;
  for (const token of [layout?.image?.token, layout?.audio?.token]) {
    if (token && out.includes(token)) out = out.split(token).join(`${token.slice(0, 1)}\u2060${token.slice(1)}`);
  }
  return out;
}

function misplaced(layout: MediaLayout, items: number): ApiError {
  const tokens = [layout.image?.token, layout.audio?.token].filter(Boolean).map((t) => `'${t}'`).join(" or ");
  return ApiError.badRequest(
    `The prompt's media placeholders do not match its ${items} media item${items === 1 ? "" : "s"}: text may not contain this model's placeholder ${tokens}, and every media item must sit in a user message or tool result.`,
  );
}
