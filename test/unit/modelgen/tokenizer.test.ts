// The byte-level BPE tokenizer: learned merges, exact UTF-8 round trips, decodable ids, single-id special tokens.
import { beforeAll, describe, expect, test } from "bun:test";
import { basename, dirname } from "node:path";
import { AutoTokenizer, env, type PreTrainedTokenizer } from "@huggingface/transformers";
import { trainBpe } from "../../../src/modelgen/bpe-train.ts";
import { BYTE_TO_CHAR, CHAR_TO_BYTE, pretokenize } from "../../../src/modelgen/byte-level.ts";
import { Rng } from "../../../src/modelgen/rng.ts";
import { buildTokenizer, SPECIAL_TOKENS } from "../../../src/modelgen/tokenizer.ts";
import { tinyModelDir } from "../../helpers/tiny-model.ts";

describe("byte-level mapping and BPE training", () => {
  test("the byte table is a bijection onto printable characters", () => {
    expect(new Set(BYTE_TO_CHAR).size).toBe(256);
    expect(BYTE_TO_CHAR[0x41]).toBe("A");
    expect(BYTE_TO_CHAR[0x20]).toBe("Ġ");
    expect(BYTE_TO_CHAR[0x0a]).toBe("Ċ");
    for (let b = 0; b < 256; b++) expect(CHAR_TO_BYTE.get(BYTE_TO_CHAR[b]!)).toBe(b);
  });

  test("pre-tokenization follows the GPT-2 split", () => {
    const pieces = pretokenize("Hello world's 42  x").map((b) => new TextDecoder().decode(b));
    expect(pieces).toEqual(["Hello", " world", "'s", " 42", " ", " x"]);
  });

  test("merges the most frequent pair first, ties by token id, and stops at pairs seen once", () => {
    // Pre-tokens: "ab", " ab" ×2, " aab", " cd" → (a,b) 4×, (Ġ,a) 3×, (a,a) and (c,d) once.
    // After merging "ab" the counts update: (Ġ,ab) 2×, (Ġ,a) and (a,ab) once.
    const r = trainBpe(["ab ab ab aab cd"], 10);
    expect(r.merges).toEqual([["a", "b"], ["Ġ", "ab"]]);
    expect(r.tokens.slice(256)).toEqual(r.merges.map(([a, b]) => a + b).filter((t, i, all) => all.indexOf(t) === i));
    expect(r.tokens).not.toContain("cd");
    // (a,a) and (a,b) both occur 4× in "aaab aaab": the smaller id pair (a,a) wins the tie.
    expect(trainBpe(["aaab aaab"], 1).merges).toEqual([["a", "a"]]);
    expect(trainBpe(["ab ab ab aab cd"], 10)).toEqual(r);
    expect(trainBpe(["ab ab ab aab cd"], 1).merges.length).toBe(1);
  });

  test("buildTokenizer fills the vocabulary exactly and puts special tokens last", () => {
    const t = buildTokenizer(4096, 1024);
    const vocab = (t.tokenizerJson.model as { vocab: Record<string, number> }).vocab;
    const ids = Object.values(vocab).sort((a, b) => a - b);
    expect(ids.length).toBe(4096);
    expect(ids.every((id, i) => id === i)).toBe(true);
    expect(vocab["<|endoftext|>"]).toBe(4096 - SPECIAL_TOKENS.length);
    expect(vocab["</tools>"]).toBe(4095);
    expect(t.ids).toEqual({ endOfText: 4085, imStart: 4086, imEnd: 4087 });
  });
});

describe("tiny tokenizer through transformers.js", () => {
  let tok: PreTrainedTokenizer;
  beforeAll(async () => {
    const dir = await tinyModelDir();
    env.allowRemoteModels = false;
    env.localModelPath = dirname(dir);
    tok = await AutoTokenizer.from_pretrained(basename(dir), { local_files_only: true });
  });

  test("each special token encodes to exactly one id and is marked special", () => {
    for (const [i, s] of SPECIAL_TOKENS.entries()) {
      const ids = tok.encode(`a${s}b`);
      expect(ids).toContain(2048 - SPECIAL_TOKENS.length + i);
      expect(tok.encode(s)).toEqual([2048 - SPECIAL_TOKENS.length + i]);
      expect(tok.decode([2048 - SPECIAL_TOKENS.length + i], { skip_special_tokens: true })).toBe("");
    }
  });

  test("learned merges compress ordinary English", () => {
    const text = "The kiln stood at the edge of the village, and the potters gathered there every autumn.";
    expect(tok.encode(text).length).toBeLessThan(text.length / 2.5);
  });

  test("random UTF-8 round-trips exactly (ASCII, accents, combining marks, CJK, emoji, controls)", () => {
    const rng = new Rng(7);
    const pools = [
      [0x20, 0x7e], [0x09, 0x0d], [0xa0, 0x17f], [0x300, 0x36f], [0x391, 0x3c9], [0x400, 0x44f], [0x5d0, 0x5ea],
      [0x627, 0x64a], [0x4e00, 0x4fff], [0x3040, 0x30ff], [0xac00, 0xac40], [0x1f300, 0x1f64f], [0x1f900, 0x1f9ff], [0x200b, 0x200d],
    ];
    for (let n = 0; n < 200; n++) {
      let s = "";
      const len = 1 + (rng.nextU32() % 40);
      for (let i = 0; i < len; i++) {
        const [lo, hi] = pools[rng.nextU32() % pools.length]!;
        s += String.fromCodePoint(lo! + (rng.nextU32() % (hi! - lo! + 1)));
      }
      expect(tok.decode(tok.encode(s))).toBe(s);
    }
    const fixed = "e\u0301 n\u0303 👩‍💻 🇵🇹 “quotes” — tab\tnl\n\n  spaces  <|im_start|> {\"a\": [1, 2]}";
    expect(tok.decode(tok.encode(fixed))).toBe(fixed);
  });

  test("every id in [0, vocab) decodes to a string", () => {
    const all = Array.from({ length: 2048 }, (_, i) => i);
    for (const id of all) expect(typeof tok.decode([id])).toBe("string");
    expect(tok.decode([2047 - SPECIAL_TOKENS.length])).toMatch(/^<\|reserved_\d+\|>$|./u);
    expect(tok.decode(all).length).toBeGreaterThan(2048);
  });
});
