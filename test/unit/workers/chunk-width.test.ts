// A long prompt's chunks: the budget while the context is short, then narrower so a chunk's attention scores stay bounded.
import { describe, expect, test } from "bun:test";
import { CHUNK_SCORE_CELLS, chunkWidth } from "../../../workers/text/chunk-width.ts";

describe("chunkWidth", () => {
  test("while budget × context fits the cells (512 tokens up to an 8k context) a chunk is the whole budget", () => {
    expect(chunkWidth(512, 0)).toBe(512);
    expect(chunkWidth(512, 7680)).toBe(512);
    expect(chunkWidth(64, 60_000)).toBe(64);
  });

  test("past it the chunk narrows in 32-token steps so chunk × context stays within the cells, down to 32", () => {
    expect(chunkWidth(512, 16_384)).toBe(224);
    expect(chunkWidth(512, 32_768)).toBe(96);
    for (const done of [9000, 20_000, 33_000, 60_000]) expect(chunkWidth(512, done) * (done + chunkWidth(512, done))).toBeLessThanOrEqual(CHUNK_SCORE_CELLS);
    expect(chunkWidth(512, 131_000)).toBe(32);
  });

  test("a budget below the step is kept as it is", () => {
    expect(chunkWidth(16, 50_000)).toBe(16);
  });
});
