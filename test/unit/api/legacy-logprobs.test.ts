// The legacy completions logprobs object from the core's entries: tokens, their logprobs, top dicts holding the
// token itself, and text offsets counted from where the choice's generated text starts.
import { describe, expect, test } from "bun:test";
import { legacyLogprobs } from "../../../src/api/completions/legacy-logprobs.ts";
import type { Logprob, PromptLogprob } from "../../../src/inference/logprobs.ts";

const entry = (token: string, logprob: number, top: [string, number][]): Logprob => ({
  token, bytes: [...new TextEncoder().encode(token)], logprob, top: top.map(([t, l]) => ({ token: t, bytes: [], logprob: l })),
});

describe("legacyLogprobs", () => {
  test("tokens, logprobs and offsets after the given start; each top dict holds the sampled token", () => {
    const lp = legacyLogprobs([entry("He", -0.1, [["He", -0.1], ["A", -2]]), entry("llo", -1.5, [["y", -0.5]])], 7);
    expect(lp).toEqual({
      tokens: ["He", "llo"],
      token_logprobs: [-0.1, -1.5],
      top_logprobs: [{ He: -0.1, A: -2 }, { y: -0.5, llo: -1.5 }],
      text_offset: [7, 9],
    });
  });

  test("two alternatives of the same text keep the likelier's logprob; no entries give empty lists", () => {
    expect(legacyLogprobs([entry("\uFFFD", -3, [["\uFFFD", -1], ["\uFFFD", -3]])], 0).top_logprobs).toEqual([{ "\uFFFD": -1 }]);
    expect(legacyLogprobs([], 4)).toEqual({ tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] });
  });

  test("an echoed prompt's entries come first from offset 0, its first token null with a null top list", () => {
    const first: PromptLogprob = { token: "The", bytes: [], logprob: null, top: null };
    const lp = legacyLogprobs([entry(" end", -0.2, [])], 8, [first, entry(" sea", -4, [[" sky", -1]])]);
    expect(lp).toEqual({
      tokens: ["The", " sea", " end"],
      token_logprobs: [null, -4, -0.2],
      top_logprobs: [null, { " sky": -1, " sea": -4 }, { " end": -0.2 }],
      text_offset: [0, 3, 8],
    });
  });
});
