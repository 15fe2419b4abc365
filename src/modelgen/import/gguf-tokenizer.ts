// A GGUF file's tokenizer metadata as Hugging Face tokenizer.json + tokenizer_config.json that transformers.js loads and
// that splits text into the ids llama.cpp gives on that file: byte-level BPE ("gpt2", with llama.cpp's pre-tokenizer
// regexes) or SentencePiece BPE ("llama", merges rebuilt from the scores, byte fallback, the ▁ space prefix).
import type { GgufValue } from "../gguf-read.ts";
import { bpePre } from "./bpe-pre.ts";

/** llama.cpp's token types (tokenizer.ggml.token_type). */
export const TOKEN_TYPE = { UNDEFINED: 0, NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

export interface HfTokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  /** Ids that end generation as llama.cpp's end-of-generation set starts: eos, eot, eom (for generation_config.json). */
  endIds: number[];
}

/** Texts llama.cpp takes as the end-of-turn token when the file names none (llama-vocab.cpp). */
const EOT_TEXTS = ["<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>"];

interface AddedToken {
  id: number;
  content: string;
  single_word: false;
  lstrip: false;
  rstrip: false;
  normalized: false;
  special: boolean;
}

const SPIECE = "▁";

/** The GGUF's tokenizer: its model, vocabulary and the per-token arrays, checked for type and length. */
interface Vocab {
  kv: Map<string, GgufValue>;
  tokens: string[];
  types: ArrayLike<number>;
  vocab: Record<string, number>;
}

function readVocab(kv: Map<string, GgufValue>): Vocab {
  const tokens = kv.get("tokenizer.ggml.tokens");
  if (!Array.isArray(tokens) || tokens.some((t) => typeof t !== "string")) throw new Error("gguf: tokenizer.ggml.tokens is missing or not a list of strings");
  const rawTypes = kv.get("tokenizer.ggml.token_type");
  // As llama.cpp: types are optional (then every token is normal), but present they must be i32s.
  if (rawTypes !== undefined && !(rawTypes instanceof Int32Array)) throw new Error("gguf: tokenizer.ggml.token_type is not an array of i32");
  const types = rawTypes ?? new Int32Array(tokens.length).fill(TOKEN_TYPE.NORMAL);
  if (types.length < tokens.length) throw new Error(`gguf: tokenizer.ggml.token_type has ${types.length} entries for ${tokens.length} tokens`);
  // llama.cpp renames an empty token (which nothing could match) to [EMPTY_<id>].
  const texts = (tokens as string[]).map((t, i) => t || `[EMPTY_${i}]`);
  const vocab: Record<string, number> = Object.create(null);
  // A repeated token text maps to its last id, as in llama.cpp's token_to_id.
  texts.forEach((t, i) => (vocab[t] = i));
  return { kv, tokens: texts, types, vocab };
}

/**
 * Texts llama.cpp makes control tokens whatever their type in the file (its end-of-generation and fill-in-the-middle
 * markers, llama-vocab.cpp), so that they too are matched whole.
 */
const CONTROL_TEXTS = new Set([
  "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>",
  "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
  "<｜end▁of▁sentence｜>", "[e~[", "<|fim_prefix|>", "<fim-prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>",
  "<|prefix|>", "<fim_prefix>", "<|fim_suffix|>", "<fim-suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>",
  "<fim_suffix>", "<|fim_middle|>", "<fim-middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>", "<fim_middle>",
  "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>",
]);

/** Control, user-defined and unknown tokens: llama.cpp matches their text before its tokenizer runs. */
function addedTokens(v: Vocab): AddedToken[] {
  const out: AddedToken[] = [];
  v.tokens.forEach((content, id) => {
    const t = v.types[id];
    const control = t === TOKEN_TYPE.CONTROL || t === TOKEN_TYPE.UNKNOWN || (CONTROL_TEXTS.has(content) && v.vocab[content] === id);
    if (!control && t !== TOKEN_TYPE.USER_DEFINED) return;
    out.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: control });
  });
  return out;
}

function optionalId(v: Vocab, key: string, fallback: number | null): number | null {
  const id = v.kv.get(`tokenizer.ggml.${key}`);
  if (typeof id === "number" && id >= 0 && id < v.tokens.length) return id;
  return fallback !== null && fallback < v.tokens.length ? fallback : null;
}

function bool(v: Vocab, key: string, fallback: boolean): boolean {
  const b = v.kv.get(`tokenizer.ggml.${key}`);
  return typeof b === "boolean" ? b : fallback;
}

/** BOS/EOS added around each encoded text, as llama.cpp's add_bos/add_eos ask (a TemplateProcessing post-processor). */
function postProcessor(v: Vocab, bos: number | null, eos: number | null, addBos: boolean, addEos: boolean): Record<string, unknown> | null {
  const pre = addBos && bos !== null ? [bos] : [];
  const post = addEos && eos !== null ? [eos] : [];
  if (!pre.length && !post.length) return null;
  const special = (id: number) => ({ SpecialToken: { id: v.tokens[id], type_id: 0 } });
  const seq = (id: "A" | "B") => ({ Sequence: { id, type_id: 0 } });
  const ends = [...pre, ...post];
  return {
    type: "TemplateProcessing",
    single: [...pre.map(special), seq("A"), ...post.map(special)],
    pair: [...pre.map(special), seq("A"), ...post.map(special), ...pre.map(special), seq("B"), ...post.map(special)],
    special_tokens: Object.fromEntries(ends.map((id) => [v.tokens[id], { id: v.tokens[id], ids: [id], tokens: [v.tokens[id]] }])),
  };
}

/** Byte-level BPE: the vocabulary and merges as they are, split first by the regexes llama.cpp picks for the `pre`. */
function gpt2Model(v: Vocab): { model: Record<string, unknown>; preTokenizer: unknown; decoder: unknown } {
  const merges = v.kv.get("tokenizer.ggml.merges");
  if (!Array.isArray(merges)) throw new Error("gguf: a gpt2 tokenizer needs tokenizer.ggml.merges");
  const pre = bpePre(v.kv.get("tokenizer.ggml.pre") as string | undefined);
  // llama.cpp splits a merge at its first space after the first character (a merge of " " itself is written "Ġ").
  const pairs = (merges as string[]).map((m) => {
    const at = m.indexOf(" ", 1);
    return at < 0 ? [m, ""] : [m.slice(0, at), m.slice(at + 1)];
  });
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false };
  return {
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: pre.ignoreMerges, vocab: v.vocab, merges: pairs },
    preTokenizer: {
      type: "Sequence",
      pretokenizers: [...pre.regexes.map((r) => ({ type: "Split", pattern: { Regex: r }, behavior: "Isolated", invert: false })), byteLevel],
    },
    decoder: byteLevel,
  };
}

/**
 * The merges llama.cpp's SentencePiece tokenizer effectively applies: it joins any two adjacent pieces whose text is a
 * token, the highest-scoring token first. So every split of a token into two tokens is a merge, ranked by the score of
 * the token it makes (ties by id). Byte tokens are never made by merging; control and user-defined ones are matched
 * before the tokenizer runs, so they are left out too.
 */
export function mergesFromScores(tokens: readonly string[], scores: ArrayLike<number>, types: ArrayLike<number>, vocab: Record<string, number>): [string, string][] {
  const found: { l: string; r: string; score: number; id: number }[] = [];
  tokens.forEach((t, id) => {
    const type = types[id];
    if (type === TOKEN_TYPE.BYTE || type === TOKEN_TYPE.CONTROL || type === TOKEN_TYPE.USER_DEFINED || type === TOKEN_TYPE.UNKNOWN) return;
    if (vocab[t] !== id) return;
    const chars = Array.from(t);
    let left = "";
    for (let k = 1; k < chars.length; k++) {
      left += chars[k - 1];
      const right = t.slice(left.length);
      if (vocab[left] !== undefined && vocab[right] !== undefined) found.push({ l: left, r: right, score: scores[id] ?? 0, id });
    }
  });
  found.sort((a, b) => b.score - a.score || a.id - b.id || a.l.length - b.l.length);
  return found.map((m) => [m.l, m.r]);
}

/** SentencePiece BPE: ▁ for spaces (and before each text when add_space_prefix), byte tokens for what is not in the vocabulary. */
function spmModel(v: Vocab, unk: number | null): { model: Record<string, unknown>; normalizer: unknown; decoder: unknown } {
  const scores = v.kv.get("tokenizer.ggml.scores");
  if (!(scores instanceof Float32Array || scores instanceof Int32Array) || scores.length < v.tokens.length) throw new Error("gguf: a llama (SentencePiece) tokenizer needs tokenizer.ggml.scores for every token");
  const spacePrefix = v.kv.get("tokenizer.ggml.add_space_prefix") ?? true;
  const replace = { type: "Replace", pattern: { String: " " }, content: SPIECE };
  return {
    model: {
      type: "BPE", dropout: null, unk_token: unk === null ? null : v.tokens[unk], continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab: v.vocab, merges: mergesFromScores(v.tokens, scores, v.types, v.vocab),
    },
    normalizer: spacePrefix ? { type: "Sequence", normalizers: [{ type: "Prepend", prepend: SPIECE }, replace] } : replace,
    decoder: {
      type: "Sequence",
      decoders: [
        { type: "Replace", pattern: { String: SPIECE }, content: " " },
        { type: "ByteFallback" },
        { type: "Fuse" },
        ...(spacePrefix ? [{ type: "Strip", content: " ", start: 1, stop: 0 }] : []),
      ],
    },
  };
}

/** tokenizer.json and tokenizer_config.json for the tokenizer in a GGUF file's metadata. */
export function ggufTokenizer(kv: Map<string, GgufValue>): HfTokenizerFiles {
  const kind = kv.get("tokenizer.ggml.model");
  if (kind !== "gpt2" && kind !== "llama") {
    throw new Error(`gguf: tokenizer model ${JSON.stringify(kind ?? null)} (tokenizer.ggml.model) is not supported; kiln imports "gpt2" (byte-level BPE) and "llama" (SentencePiece BPE)`);
  }
  const v = readVocab(kv);
  const spm = kind === "llama";
  // llama.cpp's defaults where the file names none: SentencePiece has <unk>=0, <s>=1, </s>=2; gpt2 has no unknown token.
  const bos = optionalId(v, "bos_token_id", spm ? 1 : null);
  const eos = optionalId(v, "eos_token_id", spm ? 2 : null);
  const unk = optionalId(v, "unknown_token_id", spm ? 0 : null);
  const pad = optionalId(v, "padding_token_id", null);
  const eot = optionalId(v, "eot_token_id", null) ?? EOT_TEXTS.map((t) => v.vocab[t]).find((id) => id !== undefined) ?? null;
  const eom = optionalId(v, "eom_token_id", null) ?? v.vocab["<|eom_id|>"] ?? null;
  const pre = spm ? undefined : bpePre(kv.get("tokenizer.ggml.pre") as string | undefined);
  const addBos = bool(v, "add_bos_token", spm || pre!.addBos);
  const addEos = bool(v, "add_eos_token", false);
  const parts = spm ? spmModel(v, unk) : gpt2Model(v);
  const tokenizerJson = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: addedTokens(v),
    normalizer: "normalizer" in parts ? parts.normalizer : null,
    pre_tokenizer: "preTokenizer" in parts ? parts.preTokenizer : null,
    post_processor: postProcessor(v, bos, eos, addBos, addEos),
    decoder: parts.decoder,
    model: parts.model,
  };
  const name = (id: number | null) => (id === null ? null : v.tokens[id]);
  const template = kv.get("tokenizer.chat_template");
  const tokenizerConfig: Record<string, unknown> = {
    tokenizer_class: "PreTrainedTokenizerFast",
    bos_token: name(bos),
    eos_token: name(eos),
    unk_token: name(unk),
    pad_token: name(pad),
    add_bos_token: addBos,
    add_eos_token: addEos,
    clean_up_tokenization_spaces: spm ? false : pre!.cleanSpaces,
    model_max_length: contextLength(kv),
    ...(typeof template === "string" ? { chat_template: template } : {}),
  };
  const endIds = [...new Set([eos, eot, eom].filter((id): id is number => id !== null))];
  return { tokenizerJson, tokenizerConfig, endIds };
}

/** The architecture's context length, which bounds how long a tokenized prompt may be. */
function contextLength(kv: Map<string, GgufValue>): number {
  const arch = kv.get("general.architecture");
  const n = typeof arch === "string" ? kv.get(`${arch}.context_length`) : undefined;
  return typeof n === "number" ? n : 1e30;
}
