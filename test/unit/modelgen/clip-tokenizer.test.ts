// The CLIP tokenizer files: CLIP's vocabulary order, merges that all land in the vocabulary, a reference BPE, and transformers.js agreeing with it.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutoTokenizer, env } from "@huggingface/transformers";
import { clipTokenizerFiles } from "../../../src/modelgen/diffusion/clip-tokenizer.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-clip-tok-"));
const saved = { allowRemoteModels: env.allowRemoteModels, localModelPath: env.localModelPath };
afterAll(() => {
  Object.assign(env, saved);
  rmSync(root, { recursive: true, force: true });
});

const VOCAB = 1024;
const { files } = clipTokenizerFiles(VOCAB, true);
const vocab = JSON.parse(files["vocab.json"]!) as Record<string, number>;
const tokens: string[] = [];
for (const [t, id] of Object.entries(vocab)) tokens[id] = t;
const mergeLines = files["merges.txt"]!.trimEnd().split("\n");
const merges = mergeLines.slice(1).map((l) => l.split(" ") as [string, string]);

/** GPT-2 / CLIP bytes_to_unicode, written out again here: printable bytes keep their character, the rest get 256 onwards. */
const byteChars = (() => {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const out: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(printable(b) ? b : next++);
  return out;
})();

/** CLIP's reference encoder: clean, lowercase, split, byte-map, `</w>` on each word's last symbol, merge by rank. */
function referenceEncode(text: string): number[] {
  const rank = new Map(merges.map(([a, b], i) => [`${a} ${b}`, i]));
  const clean = text.normalize("NFC").replace(/\s+/g, " ").trim().toLowerCase();
  const words = clean.match(/<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+/gu) ?? [];
  const ids = [vocab["<|startoftext|>"]!];
  for (const w of words) {
    let parts = Array.from(new TextEncoder().encode(w), (b) => byteChars[b]!);
    parts[parts.length - 1] += "</w>";
    for (;;) {
      let best = -1, at = -1;
      for (let i = 0; i + 1 < parts.length; i++) {
        const r = rank.get(`${parts[i]} ${parts[i + 1]}`);
        if (r !== undefined && (best < 0 || r < best)) (best = r), (at = i);
      }
      if (best < 0) break;
      const [a, b] = [parts[at]!, parts[at + 1]!];
      const merged: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        if (parts[i] === a && parts[i + 1] === b) merged.push(a + b), i++;
        else merged.push(parts[i]!);
      }
      parts = merged;
    }
    for (const p of parts) ids.push(vocab[p]!);
  }
  ids.push(vocab["<|endoftext|>"]!);
  return ids;
}

const SENTENCES = [
  "A photo of an astronaut riding a horse on Mars, 4k — très détaillé!!  (oil painting)",
  "It's a 1990's hyper-realistic\tPORTRAIT of a cat; trending on artstation 🐱",
];

describe("CLIP tokenizer files", () => {
  test("vocab.json: dense ids in CLIP's order (bytes, bytes with </w>, merges, then the two specials)", () => {
    expect(tokens.length).toBe(VOCAB);
    expect(Object.values(vocab).sort((a, b) => a - b)).toEqual(Array.from({ length: VOCAB }, (_, i) => i));
    expect([tokens[0], tokens[64], tokens[93], tokens[188], tokens[255]]).toEqual(["!", "a", "~", "Ā", "Ń"]);
    expect(tokens.slice(256, 512)).toEqual(tokens.slice(0, 256).map((t) => `${t}</w>`));
    expect(tokens.slice(-2)).toEqual(["<|startoftext|>", "<|endoftext|>"]);
    // The file lists tokens in id order too (digit-only keys are not hoisted to the front).
    expect(files["vocab.json"]!.startsWith('{"!":0,"\\"":1,"#":2')).toBe(true);
  });

  test("merges.txt: a version line, then one merge per learned token, each merging into the token at its rank", () => {
    expect(mergeLines[0]).toBe("#version: 0.2");
    expect(merges.length).toBe(VOCAB - 512 - 2);
    merges.forEach(([a, b], i) => {
      expect(vocab[a]).toBeDefined();
      expect(vocab[b]).toBeDefined();
      expect(vocab[a + b]).toBe(512 + i);
    });
    expect(merges.some(([, b]) => b.endsWith("</w>"))).toBe(true);
  });

  test("tokenizer_config.json and special_tokens_map.json say what a CLIPTokenizer needs", () => {
    expect(JSON.parse(files["tokenizer_config.json"]!)).toEqual({
      model_max_length: 77, bos_token: "<|startoftext|>", eos_token: "<|endoftext|>", pad_token: "<|endoftext|>", unk_token: "<|endoftext|>",
      do_lower_case: true, errors: "replace", tokenizer_class: "CLIPTokenizer", add_prefix_space: false,
    });
    expect(JSON.parse(files["special_tokens_map.json"]!)).toMatchObject({ bos_token: { content: "<|startoftext|>" }, eos_token: { content: "<|endoftext|>" }, pad_token: "<|endoftext|>" });
    expect(clipTokenizerFiles(VOCAB, false).files["tokenizer.json"]).toBeUndefined();
  });

  test("the reference BPE encodes within the vocabulary, ending each word with a </w> token", () => {
    for (const s of SENTENCES) {
      const ids = referenceEncode(s);
      expect(ids.every((id) => Number.isInteger(id) && id >= 0 && id < VOCAB)).toBe(true);
      const words: string[] = [];
      let word = "";
      for (const id of ids.slice(1, -1)) {
        word += tokens[id]!;
        if (word.endsWith("</w>")) words.push(word.slice(0, -4)), (word = "");
        else expect(tokens[id]).not.toContain("</w>");
      }
      expect(word).toBe("");
      const bytes = (w: string) => new TextDecoder().decode(Uint8Array.from([...w].map((c) => byteChars.indexOf(c))));
      expect(words.map(bytes).join("")).toBe(s.toLowerCase().replace(/\s+/g, ""));
    }
    // Frequent corpus words are single tokens.
    expect(referenceEncode("the")).toEqual([VOCAB - 2, vocab["the</w>"]!, VOCAB - 1]);
  });

  test("transformers.js loads tokenizer.json as a CLIPTokenizer and encodes as the reference does", async () => {
    const dir = join(root, "model", "tokenizer");
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    env.allowRemoteModels = false;
    env.localModelPath = join(root, "model");
    const tok = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
    expect(tok.constructor.name).toBe("CLIPTokenizer");
    for (const s of SENTENCES) expect(tok.encode(s)).toEqual(referenceEncode(s));
  });
});
