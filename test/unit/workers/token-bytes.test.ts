import { describe, expect, test } from "bun:test";
import { byteLevelDecoderTable, pieceDecoder, tokenBytesLookup } from "../../../workers/text/token-bytes.ts";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("byteLevelDecoderTable", () => {
  test("covers all 256 bytes with GPT-2's shifted characters", () => {
    const t = byteLevelDecoderTable();
    expect(t.size).toBe(256);
    expect(t.get("Ġ")).toBe(32);
    expect(t.get("Ċ")).toBe(10);
    expect(t.get("!")).toBe(33);
    expect(t.get("Ā")).toBe(0);
    expect(t.get("ÿ")).toBe(255);
  });
});

describe("pieceDecoder", () => {
  test("byte-level pieces become their raw bytes", () => {
    const d = pieceDecoder({ type: "ByteLevel" })!;
    expect(text(d("Ġhello"))).toBe(" hello");
    // "é" is stored as the two byte characters Ã (C3) and © (A9).
    expect(Array.from(d("Ã©"))).toEqual([0xc3, 0xa9]);
    expect(Array.from(d("Ã"))).toEqual([0xc3]);
  });

  test("byte-level inside a Sequence decoder is found", () => {
    expect(text(pieceDecoder({ type: "Sequence", decoders: [{ type: "ByteLevel" }] })!("ĠaĊ"))).toBe(" a\n");
  });

  test("sentencepiece pieces: ▁ is a space and <0xNN> is a raw byte", () => {
    const d = pieceDecoder({
      type: "Sequence",
      decoders: [{ type: "Replace", pattern: { String: "▁" }, content: " " }, { type: "ByteFallback" }, { type: "Fuse" }, { type: "Strip", content: " " }],
    })!;
    expect(text(d("▁the▁end"))).toBe(" the end");
    expect(Array.from(d("<0xE2>"))).toEqual([0xe2]);
    expect(text(pieceDecoder({ type: "Metaspace", replacement: "▁" })!("▁hi"))).toBe(" hi");
  });

  test("unknown decoders are reported as null", () => {
    expect(pieceDecoder({ type: "WordPiece" })).toBeNull();
    expect(pieceDecoder(null)).toBeNull();
  });
});

describe("tokenBytesLookup", () => {
  const json = {
    model: { vocab: { "Ġhi": 0, "Ã": 1, "©": 2 } },
    added_tokens: [{ id: 3, content: "<|im_end|>" }, { id: 4, content: "<think>" }],
    decoder: { type: "ByteLevel" },
  };

  test("maps vocab pieces and added tokens, and falls back for unknown ids", () => {
    const calls: number[] = [];
    const lookup = tokenBytesLookup(json, (id) => {
      calls.push(id);
      return `#${id}`;
    });
    expect(text(lookup(0))).toBe(" hi");
    expect(Array.from(lookup(1))).toEqual([0xc3]);
    expect(text(lookup(4))).toBe("<think>");
    expect(text(lookup(3))).toBe("<|im_end|>");
    expect(text(lookup(9))).toBe("#9");
    lookup(9);
    expect(calls).toEqual([9]);
  });

  test("unigram vocab arrays are indexed by position", () => {
    const lookup = tokenBytesLookup({ model: { vocab: [["▁a", 0], ["b", -1]] }, decoder: { type: "Metaspace" } }, () => "?");
    expect(text(lookup(0))).toBe(" a");
    expect(text(lookup(1))).toBe("b");
  });

  test("without an understood decoder every id uses the fallback", () => {
    const lookup = tokenBytesLookup({ model: { vocab: { hello: 0 } }, decoder: { type: "WordPiece" } }, (id) => `w${id}`);
    expect(text(lookup(0))).toBe("w0");
  });
});
