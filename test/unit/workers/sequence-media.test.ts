import { describe, expect, test } from "bun:test";
import type { MediaInput } from "../../../src/protocol/text.ts";
import { type MediaEncoders, MediaInputError } from "../../../workers/text/model-runner.ts";
import { overlap, SequenceMedia } from "../../../workers/text/sequence-media.ts";

const audio = (at: number, tokens: number): MediaInput => ({ kind: "audio", at, tokens, samples: new Float32Array(4), sampleRate: 16000 });

/** Encoders whose features for an input at `at` are rows [at·10 + k, at·10 + k] (hidden 2), so rows show their origin. */
const encoders: MediaEncoders = {
  tokenIds: { audio: 9 },
  hidden: 2,
  prepare: async (input) => ({ data: Float32Array.of(input.at), dims: [1] }),
  encode: async (_kind, p) => {
    const at = p.data[0]!;
    const tokens = at === 1 ? 3 : 2;
    return Float32Array.from({ length: tokens * 2 }, (_, i) => at * 10 + Math.floor(i / 2));
  },
};

describe("overlap", () => {
  test("clips a run to a pass's span", () => {
    expect(overlap(2, 5, 0, 4)).toEqual({ lo: 2, hi: 4 });
    expect(overlap(2, 5, 4, 10)).toEqual({ lo: 4, hi: 7 });
    expect(overlap(2, 5, 7, 3)).toBeNull();
    expect(overlap(2, 5, 0, 2)).toBeNull();
  });
});

describe("SequenceMedia", () => {
  test("without inputs it is ready at once and carries nothing", () => {
    const m = new SequenceMedia([]);
    expect([m.ready, m.carries]).toEqual([true, false]);
    expect(m.rows(0, 0, 10, 0, 2)).toEqual([]);
  });

  test("encodes only inputs a span reaches and places their rows by column", async () => {
    const m = new SequenceMedia([audio(1, 3), audio(6, 2)]);
    expect(m.ready).toBe(false);
    await m.prepare(encoders);
    expect(m.ready).toBe(true);
    // A chunk of positions [0, 3) reaches only the first input: the second is not encoded yet, so asking for it throws.
    await m.encode(encoders, 0, 3);
    expect(() => m.rows(0, 5, 3, 0, 2)).toThrow("media 1 (audio) is not encoded");
    const first = m.rows(2, 0, 3, 4, 2);
    expect(first.map((f) => [f.row, f.col, Array.from(f.data)])).toEqual([[2, 5, [10, 10, 11, 11]]]);
    await m.encode(encoders, 3, 8);
    const rest = m.rows(0, 3, 5, 0, 2);
    expect(rest.map((f) => [f.col, Array.from(f.data)])).toEqual([[0, [12, 12]], [3, [60, 60, 61, 61]]]);
    m.release();
    expect(() => m.rows(0, 0, 8, 0, 2)).toThrow("not encoded");
  });

  test("a feature count other than the placeholders, and an encoder's throw, become short messages", async () => {
    const wrong = new SequenceMedia([audio(1, 4)]);
    await wrong.prepare(encoders);
    await expect(wrong.encode(encoders, 0, 9)).rejects.toThrow(new MediaInputError("media 0 (audio): 3 feature rows for 4 placeholder tokens"));
    const failing = new SequenceMedia([audio(1, 3)]);
    await failing.prepare(encoders);
    await expect(failing.encode({ ...encoders, encode: async () => Promise.reject(new Error("ORT /x/y.cc:12 boom")) }, 0, 9)).rejects.toThrow(
      new MediaInputError("media 0 (audio): the audio encoder failed"),
    );
  });
});
