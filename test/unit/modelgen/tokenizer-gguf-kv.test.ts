// tokenizer.json → GGUF tokenizer metadata on tiny hand-made tokenizers: token types, scores from merge ranks, the
// pre-tokenizer's llama.cpp name, special ids and flags; and the merges rebuilt from those scores.
import { describe, expect, test } from "bun:test";
import type { GgufKv } from "../../../src/modelgen/gguf-file.ts";
import { bpePre, bpePreName } from "../../../src/modelgen/import/bpe-pre.ts";
import { mergesFromScores, TOKEN_TYPE } from "../../../src/modelgen/import/gguf-tokenizer.ts";
import { tokenizerGgufKv } from "../../../src/modelgen/import/tokenizer-gguf-kv.ts";

const LLAMA3_SPLIT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const added = (id: number, content: string, special: boolean) => ({ id, content, special, normalized: false, lstrip: false, rstrip: false, single_word: false });

const SPM = {
  normalizer: { type: "Sequence", normalizers: [{ type: "Prepend", prepend: "▁" }, { type: "Replace", pattern: { String: " " }, content: "▁" }] },
  pre_tokenizer: null,
  added_tokens: [added(0, "<unk>", true), added(1, "<s>", true), added(2, "</s>", true), added(10, "▁▁", false), added(12, "<unused0>", false)],
  model: {
    type: "BPE", byte_fallback: true, unk_token: "<unk>",
    vocab: { "<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "▁": 4, a: 5, b: 6, "▁a": 7, ab: 8, "▁ab": 9, "▁▁": 10, bab: 11, "<unused0>": 12 },
    merges: ["▁ a", "a b", "▁a b", "▁ ab"],
  },
};

const get = (kvs: GgufKv[], key: string) => kvs.find((k) => k.key === key)?.value;

describe("tokenizer.json to GGUF metadata", () => {
  test("SentencePiece BPE with byte fallback: llama model, token types, scores from merge ranks, space prefix", () => {
    const kvs = tokenizerGgufKv(SPM, { bos_token: "<s>", eos_token: { content: "</s>" }, unk_token: "<unk>", add_bos_token: true, chat_template: [{ name: "tool_use", template: "T" }, { name: "default", template: "D" }] }, 14);
    expect(get(kvs, "tokenizer.ggml.model")).toBe("llama");
    expect(get(kvs, "tokenizer.ggml.pre")).toBe("default");
    const tokens = get(kvs, "tokenizer.ggml.tokens") as string[];
    // User-defined spaces are pre-normalized; the id the vocabulary skips becomes an unused [PAD13].
    expect(tokens.slice(9)).toEqual(["▁ab", "  ", "bab", "<unused0>", "[PAD13]"]);
    const T = TOKEN_TYPE;
    expect(Array.from(get(kvs, "tokenizer.ggml.token_type") as Int32Array)).toEqual([T.UNKNOWN, T.CONTROL, T.CONTROL, T.BYTE, T.NORMAL, T.NORMAL, T.NORMAL, T.NORMAL, T.NORMAL, T.NORMAL, T.USER_DEFINED, T.NORMAL, T.CONTROL, T.UNUSED]);
    // ▁a, ab, ▁ab are made by merges 0, 1, 2; "bab" by none (lowest); added tokens take -1000; characters, bytes, <unk> 0.
    expect(Array.from(get(kvs, "tokenizer.ggml.scores") as Int32Array)).toEqual([0, -1000, -1000, 0, 0, 0, 0, 0, -1, -2, -1000, -1e9, -1000, 0]);
    expect([get(kvs, "tokenizer.ggml.bos_token_id"), get(kvs, "tokenizer.ggml.eos_token_id"), get(kvs, "tokenizer.ggml.unknown_token_id")]).toEqual([1, 2, 0]);
    expect([get(kvs, "tokenizer.ggml.add_bos_token"), get(kvs, "tokenizer.ggml.add_eos_token"), get(kvs, "tokenizer.ggml.add_space_prefix")]).toEqual([true, false, true]);
    expect(get(kvs, "tokenizer.chat_template")).toBe("D");
    expect(get(kvs, "tokenizer.ggml.merges")).toBeUndefined();
  });

  test("the merges rebuilt from those scores: every two-token split, best score first", () => {
    const kvs = tokenizerGgufKv(SPM, {}, 13);
    const tokens = get(kvs, "tokenizer.ggml.tokens") as string[];
    const vocab: Record<string, number> = {};
    tokens.forEach((t, i) => (vocab[t] = i));
    const merges = mergesFromScores(tokens, get(kvs, "tokenizer.ggml.scores") as Int32Array, get(kvs, "tokenizer.ggml.token_type") as Int32Array, vocab);
    expect(merges).toEqual([["▁", "a"], ["a", "b"], ["▁", "ab"], ["▁a", "b"], ["b", "ab"]]);
  });

  test("byte-level BPE: gpt2 model, merges as written, the pre-tokenizer named by its regex, BOS from the post-processor", () => {
    const json = {
      added_tokens: [added(5, "<|begin_of_text|>", true), added(6, "<|eot_id|>", true), added(7, "<tool>", false), added(8, "<|fim_pad|>", false)],
      pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "Split", pattern: { Regex: LLAMA3_SPLIT }, behavior: "Isolated", invert: false }, { type: "ByteLevel" }] },
      post_processor: { type: "Sequence", processors: [{ type: "ByteLevel" }, { type: "TemplateProcessing", single: [{ SpecialToken: { id: "<|begin_of_text|>" } }, { Sequence: { id: "A" } }] }] },
      model: { type: "BPE", vocab: { a: 0, b: 1, ab: 2, "Ġ": 3, "Ġab": 4 }, merges: [["a", "b"], ["Ġ", "ab"]] },
    };
    const kvs = tokenizerGgufKv(json, { bos_token: "<|begin_of_text|>", eos_token: "<|eot_id|>" });
    expect([get(kvs, "tokenizer.ggml.model"), get(kvs, "tokenizer.ggml.pre")]).toEqual(["gpt2", "llama-bpe"]);
    expect(get(kvs, "tokenizer.ggml.merges")).toEqual(["a b", "Ġ ab"]);
    const T = TOKEN_TYPE;
    // "<|fim_pad|>" is not marked special but looks it, as llama.cpp's converter judges.
    expect(Array.from(get(kvs, "tokenizer.ggml.token_type") as Int32Array)).toEqual([T.NORMAL, T.NORMAL, T.NORMAL, T.NORMAL, T.NORMAL, T.CONTROL, T.CONTROL, T.USER_DEFINED, T.CONTROL]);
    expect([get(kvs, "tokenizer.ggml.bos_token_id"), get(kvs, "tokenizer.ggml.eos_token_id"), get(kvs, "tokenizer.ggml.add_bos_token")]).toEqual([5, 6, true]);
    expect(get(kvs, "tokenizer.ggml.scores")).toBeUndefined();
    const unknown = { ...json, pre_tokenizer: { type: "Split", pattern: { Regex: "\\w+" } } };
    expect(() => tokenizerGgufKv(unknown, {})).toThrow(/no llama.cpp pre-tokenizer is known/);
  });

  test("pre-tokenizer names both ways", () => {
    expect(bpePreName(LLAMA3_SPLIT)).toBe("llama-bpe");
    expect(bpePre("llama-bpe")).toMatchObject({ ignoreMerges: true, addBos: true });
    expect(bpePre("qwen2")).toMatchObject({ ignoreMerges: false, addBos: false, cleanSpaces: false });
    expect(bpePre(undefined).regexes).toHaveLength(4);
    expect(() => bpePre("bloom")).toThrow(/"bloom" .* not supported/);
  });
});
