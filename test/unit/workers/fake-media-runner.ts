// A FakeRunner that takes images and audio: an input's "features" are token values (hidden size 1) that the pass feeds
// in place of the placeholder ids, so a media prompt's greedy output is referenceGreedy of the substituted prompt.
import type { MediaInput } from "../../../src/protocol/text.ts";
import type { StepInputs } from "../../../workers/text/batch-inputs.ts";
import type { BatchKv } from "../../../workers/text/kv-cache.ts";
import { type ForwardResult, type MediaEncoders, MediaInputError, type MediaKind, type PreparedMedia } from "../../../workers/text/model-runner.ts";
import { FakeRunner, VOCAB } from "./fake-runner.ts";

export const IMAGE = 60;
export const AUDIO = 61;

/** The feature tokens an image stands for: its rgb bytes, one per placeholder (mod the vocabulary). */
export const imageTokens = (rgb: Uint8Array) => Array.from(rgb, (b) => b % VOCAB);

/** An image input over `tokens` placeholders at `at` whose features are `rgb` (width = tokens, height 1 → 3 bytes a pixel). */
export function fakeImage(at: number, tokens: number, seed: number): MediaInput & { kind: "image" } {
  const rgb = Uint8Array.from({ length: tokens * 3 }, (_, i) => (seed * 13 + i * 7) % 251);
  return { kind: "image", at, tokens, image: { rgb, width: tokens, height: 1 } };
}

/** The prompt as the fake model sees it: each image's placeholders replaced by its first `tokens` feature tokens. */
export function substituted(prompt: number[], media: MediaInput[]): number[] {
  const out = [...prompt];
  for (const m of media) if (m.kind === "image" && "rgb" in m.image) imageTokens(m.image.rgb).slice(0, m.tokens).forEach((t, k) => (out[m.at + k] = t));
  return out;
}

export class FakeMediaRunner extends FakeRunner implements MediaEncoders {
  readonly media: MediaEncoders = this;
  readonly tokenIds: Partial<Record<MediaKind, number>> = { image: IMAGE, audio: AUDIO };
  readonly hidden = 1;
  /** Preprocessing waits on this while it is set (the test releases it). */
  gate: Promise<void> | null = null;
  /** Images of this width fail preprocessing (with our own message when `own`). */
  failWidth = { width: -1, own: false };
  /** Encoding an input with this many placeholder tokens throws; one with `shortTokens` gives a row too few. */
  failTokens = -1;
  shortTokens = -1;
  /** Every pass's feature rows, as [row, col, length]. */
  readonly placed: [number, number, number][][] = [];
  prepared = 0;

  async prepare(input: MediaInput): Promise<PreparedMedia> {
    if (this.gate) await this.gate;
    this.prepared++;
    if (input.kind !== "image" || !("rgb" in input.image)) throw new MediaInputError("the fake takes raw images only");
    if (input.image.width === this.failWidth.width) throw this.failWidth.own ? new MediaInputError("too wide") : new Error("/secret/path: libvips exploded");
    return { data: Float32Array.from(imageTokens(input.image.rgb).slice(0, input.tokens)), dims: [input.tokens] };
  }

  async encode(_kind: MediaKind, prepared: PreparedMedia): Promise<Float32Array> {
    if (prepared.data.length === this.failTokens) throw new Error("ORT: encoder node 17 failed");
    return prepared.data.length === this.shortTokens ? prepared.data.slice(1) : prepared.data.slice();
  }

  /** Feeds each feature row's token value in place of the id at its column, then runs the fake model. */
  override forward(inputs: StepInputs, past: BatchKv | null): Promise<ForwardResult> {
    const ids = inputs.inputIds.slice();
    for (const f of inputs.features ?? []) f.data.forEach((v, k) => (ids[f.row * inputs.seqLen + f.col + k] = BigInt(v)));
    this.placed.push((inputs.features ?? []).map((f) => [f.row, f.col, f.data.length]));
    return super.forward({ ...inputs, inputIds: ids }, past);
  }
}
