import { describe, expect, test } from "bun:test";
import { checkPromptBound } from "../../../src/inference/context.ts";
import { maxBytesPerToken, minTokens, normalizerShrink } from "../../../src/inference/token-bound.ts";

describe("normalizerShrink", () => {
  test("none, Unicode forms, replaces and sequences", () => {
    expect(normalizerShrink(null)).toBe(1);
    expect(normalizerShrink({ type: "NFC" })).toBe(4);
    expect(normalizerShrink({ type: "Prepend" })).toBe(1);
    // Llama-style: spaces become "▁" (3 bytes), which only grows the text.
    expect(normalizerShrink({ type: "Sequence", normalizers: [{ type: "Prepend" }, { type: "Replace", pattern: { String: " " }, content: "▁" }] })).toBe(1);
    expect(normalizerShrink({ type: "Replace", pattern: { String: "abcd" }, content: "x" })).toBe(4);
  });

  test("normalizers that can delete text admit no bound", () => {
    expect(normalizerShrink({ type: "BertNormalizer" })).toBeNull();
    expect(normalizerShrink({ type: "Strip" })).toBeNull();
    expect(normalizerShrink({ type: "Replace", pattern: { Regex: "\\s+" }, content: " " })).toBeNull();
    expect(normalizerShrink({ type: "Replace", pattern: { String: "x" }, content: "" })).toBeNull();
    expect(normalizerShrink({ type: "Sequence", normalizers: [{ type: "NFC" }, { type: "Strip" }] })).toBeNull();
  });
});

describe("maxBytesPerToken", () => {
  const bpe = { model: { type: "BPE" }, pre_tokenizer: { type: "ByteLevel" } };
  test("the longest vocabulary or added token, at least 4", () => {
    expect(maxBytesPerToken(bpe, ["a", "ab", "ĠĠĠĠ"])).toBe(8);
    expect(maxBytesPerToken({ ...bpe, added_tokens: [{ content: "<|im_start|>" }] }, ["a"])).toBe(12);
    expect(maxBytesPerToken(bpe, ["a"])).toBe(4);
    expect(maxBytesPerToken({ ...bpe, normalizer: { type: "NFC" } }, ["abcdef"])).toBe(24);
  });

  test("no bound for non-BPE models or fused unknowns without byte fallback", () => {
    expect(maxBytesPerToken({ model: { type: "WordPiece" } }, ["a"])).toBeNull();
    expect(maxBytesPerToken({ model: { type: "BPE", fuse_unk: true } }, ["a"])).toBeNull();
    expect(maxBytesPerToken({ model: { type: "BPE", fuse_unk: true, byte_fallback: true } }, ["a"])).toBe(4);
  });

  test("minTokens", () => {
    expect(minTokens("x".repeat(100), 8)).toBe(13);
    // Counted in UTF-16 units (at most the UTF-8 bytes): "é" is 2 bytes but counts 1.
    expect(minTokens("é".repeat(8), 4)).toBe(2);
    expect(minTokens("🙂".repeat(4), 4)).toBe(2);
    expect(minTokens("anything", null)).toBe(0);
  });
});

describe("checkPromptBound", () => {
  test("passes what may fit, refuses what cannot with the three numbers", () => {
    expect(() => checkPromptBound(4000, 96, 4096)).not.toThrow();
    expect(() => checkPromptBound(4096, null, 4096)).toThrow(
      "This model's maximum context length is 4096 tokens. However, you requested at least 4097 tokens (at least 4096 in the input, 1 in the output).",
    );
  });
});
