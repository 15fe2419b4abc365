// A sequence's images and audio clips through their life: preprocessed when the add arrives, encoded at prefill,
// their feature rows placed over the prompt positions they hold (a chunk may cut a run), dropped once prefilled.
import type { MediaInput } from "../../src/protocol/text.ts";
import type { FeatureRows } from "./batch-inputs.ts";
import { type MediaEncoders, MediaInputError, type PreparedMedia } from "./model-runner.ts";

interface Item {
  /** Where its rows go; kept for the sequence's life. */
  input: Pick<MediaInput, "kind" | "at" | "tokens">;
  /** The image bytes or samples: dropped once preprocessed, so a long prompt does not hold them while it decodes. */
  payload: MediaInput | null;
  prepared: PreparedMedia | null;
  features: Float32Array | null;
}

/** The part of [at, at + tokens) inside [start, start + length), or null when they do not meet. */
export function overlap(at: number, tokens: number, start: number, length: number): { lo: number; hi: number } | null {
  const lo = Math.max(at, start);
  const hi = Math.min(at + tokens, start + length);
  return lo < hi ? { lo, hi } : null;
}

export class SequenceMedia {
  private readonly items: Item[];
  /** Whether the sequence was added with media (stays true after its features are dropped). */
  readonly carries: boolean;
  /** True once every input is preprocessed (at once without media). */
  ready: boolean;

  constructor(inputs: readonly MediaInput[]) {
    this.items = inputs.map((input) => ({ input: { kind: input.kind, at: input.at, tokens: input.tokens }, payload: input, prepared: null, features: null }));
    this.carries = inputs.length > 0;
    this.ready = !this.carries;
  }

  /** Preprocesses every input at once; rejects with a short message naming the first input that failed. */
  async prepare(encoders: MediaEncoders): Promise<void> {
    await Promise.all(
      this.items.map(async (item, i) => {
        try {
          item.prepared = await encoders.prepare(item.payload!);
          item.payload = null;
        } catch (err) {
          // Preprocessing libraries' own text may name files or internals: only our own checks' messages go out.
          const why = err instanceof MediaInputError ? err.message : "could not be preprocessed";
          throw new MediaInputError(`${label(item, i)}: ${why}`);
        }
      }),
    );
    this.ready = true;
  }

  /**
   * Runs the encoder of every input that overlaps prompt positions [from, to) and has no features yet. Throws
   * MediaInputError when an encoder fails or gives another number of rows than the input's placeholder tokens.
   */
  async encode(encoders: MediaEncoders, from: number, to: number): Promise<void> {
    for (const [i, item] of this.items.entries()) {
      if (item.features || !overlap(item.input.at, item.input.tokens, from, to - from)) continue;
      if (!item.prepared) throw new MediaInputError(`${label(item, i)}: not preprocessed`);
      let features: Float32Array;
      try {
        features = await encoders.encode(item.input.kind, item.prepared);
      } catch {
        throw new MediaInputError(`${label(item, i)}: the ${item.input.kind} encoder failed`);
      }
      const rows = features.length / encoders.hidden;
      if (rows !== item.input.tokens) throw new MediaInputError(`${label(item, i)}: ${rows} feature rows for ${item.input.tokens} placeholder tokens`);
      item.features = features;
      item.prepared = null;
    }
  }

  /**
   * The feature rows over prompt positions [start, start + length) of a pass, for its row `row` whose prompt position
   * `start` sits in column `col0`. Inputs must have been encoded over that range.
   */
  rows(row: number, start: number, length: number, col0: number, hidden: number): FeatureRows[] {
    const out: FeatureRows[] = [];
    for (const [i, item] of this.items.entries()) {
      const part = overlap(item.input.at, item.input.tokens, start, length);
      if (!part) continue;
      if (!item.features) throw new Error(`${label(item, i)} is not encoded`);
      const skip = part.lo - item.input.at;
      out.push({ row, col: col0 + part.lo - start, data: item.features.subarray(skip * hidden, (part.hi - item.input.at) * hidden) });
    }
    return out;
  }

  /** Frees inputs, preprocessed inputs and features once the whole prompt is prefilled (or the sequence ends). */
  release(): void {
    for (const item of this.items) {
      item.payload = null;
      item.prepared = null;
      item.features = null;
    }
  }
}

const label = (item: Item, i: number) => `media ${i} (${item.input.kind})`;
