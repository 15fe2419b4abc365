// The image prompt tokenizer: CLIP's vocab.json + merges.txt made into a tokenizer, prompts framed, cut and padded
// to the text encoder's length, and the bounded prefix a long prompt is tokenized from.
import { describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildImageModel, IMAGE_PRESETS, imageVariant } from "../../../src/modelgen/index.ts";
import { clipTokenizerJson, parseMerges, parseVocab } from "../../../src/images/clip-tokenizer-json.ts";
import { loadPromptTokenizer, promptPrefix } from "../../../src/images/prompt-tokenizer.ts";
import { tempDir } from "../../helpers/kiln.ts";

/** GPT-2's byte → printable character table, which CLIP's vocabulary uses. */
function byteChars(): string[] {
  const printable = [...Array.from({ length: 94 }, (_, i) => 33 + i), ...Array.from({ length: 12 }, (_, i) => 161 + i), ...Array.from({ length: 82 }, (_, i) => 174 + i)];
  const out: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  return out;
}

const MERGES = ["t h", "th e</w>", "c a", "ca t</w>", "r e", "re d</w>"];

/** A CLIP-style folder: bytes, bytes with </w>, one token per merge, then the two specials. */
function clipFolder(extra: Record<string, unknown> = {}, asJson = false): string {
  const vocab: Record<string, number> = {};
  let id = 0;
  for (const c of byteChars()) vocab[c] = id++;
  for (const c of byteChars()) vocab[`${c}</w>`] = id++;
  for (const m of MERGES) vocab[m.replace(" ", "")] = id++;
  vocab["<|startoftext|>"] = id++;
  vocab["<|endoftext|>"] = id++;
  const dir = tempDir();
  mkdirSync(join(dir, "tokenizer"));
  writeFileSync(join(dir, "tokenizer", "tokenizer_config.json"), JSON.stringify({ model_max_length: 77, ...extra }));
  if (asJson) writeFileSync(join(dir, "tokenizer", "tokenizer.json"), JSON.stringify(clipTokenizerJson(vocab, MERGES)));
  else {
    writeFileSync(join(dir, "tokenizer", "vocab.json"), JSON.stringify(vocab));
    writeFileSync(join(dir, "tokenizer", "merges.txt"), `#version: 0.2\n${MERGES.join("\n")}\n`);
  }
  return dir;
}

describe("the image prompt tokenizer", () => {
  test("lower-cases, splits CLIP's way, merges word-final symbols with </w>, frames with bos/eos and pads to the length", () => {
    const tok = loadPromptTokenizer(clipFolder(), 10);
    const e = tok.encode("The  RED cat!");
    // Merges from 512: th, the</w>=513, ca, cat</w>=515, re, red</w>=517; bos=518, eos=519; "!</w>" is byte 33's twin, 256 + 33.
    expect(e.ids).toEqual([518, 513, 517, 515, 289, 519, 519, 519, 519, 519]);
    expect(e).toMatchObject({ tokens: 6, truncated: false, seen: "The  RED cat!" });
  });

  test("the pad token is the tokenizer config's; a tokenizer.json folder encodes the same", () => {
    const pad = loadPromptTokenizer(clipFolder({ pad_token: "!" }), 8).encode("red");
    expect(pad.ids).toEqual([518, 517, 519, 33, 33, 33, 33, 33]);
    expect(loadPromptTokenizer(clipFolder({ pad_token: "!" }, true), 8).encode("red").ids).toEqual(pad.ids);
  });

  test("a prompt longer than the encoder reads is cut to bos, the first tokens and eos, and says what was read", () => {
    const e = loadPromptTokenizer(clipFolder(), 5).encode("the red cat the red cat");
    expect(e).toMatchObject({ ids: [518, 513, 517, 515, 519], tokens: 5, truncated: true, seen: "the red cat" });
  });

  test("a long prompt is tokenized from a prefix that decides its first tokens exactly", () => {
    expect(promptPrefix("a b  c d", 2, 100)).toBe("a b");
    expect(promptPrefix("  a b", 5, 100)).toBe("  a b");
    expect(promptPrefix("x".repeat(50), 2, 10)).toBe("x".repeat(10));
    expect(promptPrefix(`a ${"y".repeat(50)}`, 5, 10)).toBe(`a ${"y".repeat(9)}`);
    // Whitespace counts for nothing: words after a long run of it are still read.
    expect(promptPrefix(`cat${" ".repeat(5000)}dog`, 5, 10)).toBe(`cat${" ".repeat(5000)}dog`);
    const spaced = loadPromptTokenizer(clipFolder(), 77);
    expect(spaced.encode(`cat${" ".repeat(5000)}red`)).toMatchObject({ ids: spaced.encode("cat red").ids, tokens: 4, truncated: false });
    const tok = loadPromptTokenizer(clipFolder(), 77);
    const long = `${"the red cat ".repeat(40)}${"z".repeat(20_000)}`;
    const e = tok.encode(long);
    expect(e.tokens).toBe(77);
    expect(e.ids.slice(1, 76)).toEqual(tok.encode("the red cat ".repeat(40)).ids.slice(1, 76));
  });

  test("on a built image model, the tokenizer made from vocab.json + merges.txt encodes exactly as the folder's own tokenizer.json", async () => {
    const dir = join(tempDir(), "m");
    await buildImageModel({ spec: imageVariant(IMAGE_PRESETS["tiny-image"]!, { tokenizerJson: true }), outDir: dir });
    const fromJson = loadPromptTokenizer(dir, 77);
    rmSync(join(dir, "tokenizer", "tokenizer.json"));
    const fromBpe = loadPromptTokenizer(dir, 77);
    for (const prompt of ["A lighthouse at dusk, waves below!", "it's 3 o'clock — café au lait?", "x".repeat(300), "tabs\tand\nnewlines   and  spaces", "ÆØÅ 漢字 emoji 🙂"]) {
      expect(fromBpe.encode(prompt)).toEqual(fromJson.encode(prompt));
    }
  });

  test("the files' own faults are refused by name", () => {
    expect(() => parseMerges("#version: 0.2\nt h\nbad\n")).toThrow("merges.txt line 3");
    expect(() => parseVocab({ a: 1.5 })).toThrow("not a whole number");
    expect(() => parseVocab({ a: 1 })).toThrow("vocab.json has no <|startoftext|>");
    expect(parseMerges("t h\r\nc a\r\n")).toEqual(["t h", "c a"]);
  });
});
