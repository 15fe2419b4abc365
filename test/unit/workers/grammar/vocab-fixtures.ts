// The real vocabularies the grammar tests run on (the built tiny model's, and the qwen2-0.5b preset's built
// without weights), plus encoders and a driver that feeds token ids through a matcher the way the engine will.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { AutoTokenizer, env } from "@huggingface/transformers";
import { buildTokenizer, specialId } from "../../../../src/modelgen/tokenizer.ts";
import { ConstraintCompiler } from "../../../../workers/text/grammar/constraint-compiler.ts";
import type { ConstraintMatcher } from "../../../../workers/text/grammar/constraint-matcher.ts";
import { grammarVocabFromTokenizer, type GrammarVocab } from "../../../../workers/text/grammar/grammar-vocab.ts";
import { isAllowed, maskWords } from "../../../../workers/text/grammar/token-mask.ts";
import type { TokenizerJson } from "../../../../workers/text/token-bytes.ts";
import { tinyModelDir } from "../../../helpers/tiny-model.ts";

export interface VocabFixture {
  name: string;
  vocab: GrammarVocab;
  compiler: ConstraintCompiler;
  /** The tokenizer's own encoding of `text` (BPE merges, so multi-character tokens). */
  encode: (text: string) => number[];
}

const utf8 = new TextEncoder();

/** Longest-match encoding over the vocabulary's byte strings: other real token boundaries than BPE's. */
export function greedyEncoder(vocab: GrammarVocab): (bytes: Uint8Array | string) => number[] {
  const byId = new Map<string, number>();
  let longest = 1;
  vocab.byteLevel.forEach((s, id) => {
    if (s && !byId.has(s)) byId.set(s, id);
    longest = Math.max(longest, s.length);
  });
  const single = (b: number) => {
    const id = byId.get(charOf(b));
    if (id === undefined) throw new Error(`no token for byte ${b}`);
    return id;
  };
  return (input) => {
    const bytes = typeof input === "string" ? utf8.encode(input) : input;
    const text = Array.from(bytes, (b) => charOf(b)).join("");
    const ids: number[] = [];
    for (let i = 0; i < text.length; ) {
      let n = Math.min(longest, text.length - i);
      while (n > 1 && !byId.has(text.slice(i, i + n))) n--;
      ids.push(n === 1 ? single(bytes[i]!) : byId.get(text.slice(i, i + n))!);
      i += n;
    }
    return ids;
  };
}

// GPT-2's byte alphabet, the same one grammar-vocab writes tokens in.
const BYTE_CHARS: string[] = (() => {
  const out: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    out[b] = String.fromCharCode(printable ? b : next++);
  }
  return out;
})();
const charOf = (b: number) => BYTE_CHARS[b]!;
const byteOf = (c: string) => BYTE_CHARS.indexOf(c);

/** The id of the token that is exactly byte `b`. */
export function byteToken(vocab: GrammarVocab, b: number): number {
  return vocab.byteLevel.indexOf(charOf(b));
}

/** The bytes token `id` stands for. */
export function tokenBytes(vocab: GrammarVocab, id: number): number[] {
  return Array.from(vocab.byteLevel[id]!, byteOf);
}

let tiny: Promise<VocabFixture> | null = null;
let qwen: Promise<VocabFixture> | null = null;

/** The built tiny model's tokenizer (2,048 ids), with transformers.js encoding. */
export function tinyFixture(): Promise<VocabFixture> {
  tiny ??= (async () => {
    const dir = await tinyModelDir();
    const json = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")) as TokenizerJson;
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as { vocab_size: number };
    const gen = JSON.parse(readFileSync(join(dir, "generation_config.json"), "utf8")) as { eos_token_id: number[] };
    const vocab = grammarVocabFromTokenizer(json, { size: config.vocab_size, stopIds: gen.eos_token_id });
    env.allowRemoteModels = false;
    env.localModelPath = dirname(dir);
    const tok = await AutoTokenizer.from_pretrained(basename(dir), { local_files_only: true });
    const encode = (text: string) => tok.encode(text, { add_special_tokens: false });
    return { name: "kiln-tiny-v1", vocab, compiler: await ConstraintCompiler.create(vocab), encode };
  })();
  return tiny;
}

/** The qwen2-0.5b preset's tokenizer (151,936 ids, built without weights), with transformers.js encoding. */
export function qwenFixture(): Promise<VocabFixture> {
  qwen ??= (async () => {
    const size = 151936;
    const t = buildTokenizer(size, 32768);
    const vocab = grammarVocabFromTokenizer(t.tokenizerJson as TokenizerJson, { size, stopIds: [specialId(size, "<|im_end|>"), specialId(size, "<|endoftext|>")] });
    // transformers.js loads tokenizers from folders only: write one, load it, remove it.
    const root = mkdtempSync(join(tmpdir(), "kiln-grammar-tok-"));
    try {
      mkdirSync(join(root, "qwen"));
      writeFileSync(join(root, "qwen", "tokenizer.json"), JSON.stringify(t.tokenizerJson));
      writeFileSync(join(root, "qwen", "tokenizer_config.json"), JSON.stringify(t.tokenizerConfig));
      env.allowRemoteModels = false;
      env.localModelPath = root;
      const tok = await AutoTokenizer.from_pretrained("qwen", { local_files_only: true });
      const encode = (text: string) => tok.encode(text, { add_special_tokens: false });
      return { name: "qwen2-0.5b preset", vocab, compiler: await ConstraintCompiler.create(vocab), encode };
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  })();
  return qwen;
}

export interface DriveResult {
  /** Index of the first token the constraint refused (absent from the mask and refused by accept), or -1. */
  rejectedAt: number;
  /** Bytes accepted before it. */
  acceptedBytes: number;
  complete: boolean;
  /** Whether the stop ids were in the mask after the last accepted token. */
  stopAllowed: boolean;
}

/** Feeds `ids`, checking before each that the mask and accept() agree on whether it is allowed. */
export async function drive(m: ConstraintMatcher, vocab: GrammarVocab, ids: number[]): Promise<DriveResult> {
  const mask = new Uint32Array(maskWords(vocab.size));
  let acceptedBytes = 0;
  for (let i = 0; i < ids.length; i++) {
    await m.fillMask(mask);
    const inMask = isAllowed(mask, ids[i]!);
    const accepted = m.accept(ids[i]!);
    if (inMask !== accepted) throw new Error(`mask says ${inMask} but accept says ${accepted} for token ${ids[i]} at ${i}`);
    if (!accepted) return { rejectedAt: i, acceptedBytes, complete: m.isComplete(), stopAllowed: vocab.stopIds.some((s) => isAllowed(mask, s)) };
    acceptedBytes += vocab.byteLevel[ids[i]!]!.length;
  }
  await m.fillMask(mask);
  return { rejectedAt: -1, acceptedBytes, complete: m.isComplete(), stopAllowed: vocab.stopIds.some((s) => isAllowed(mask, s)) };
}
