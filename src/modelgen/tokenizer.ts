// Builds tokenizer.json and tokenizer_config.json: byte-level BPE learned from the corpus, placeholder fill, special tokens.
import { trainBpe } from "./bpe-train.ts";
import { chatTemplate } from "./chat-template.ts";
import { CORPUS } from "./corpus.ts";

/** Special tokens, in id order at the very end of the vocabulary (as Qwen2 places them). */
export const SPECIAL_TOKENS = [
  "<|endoftext|>",
  "<|im_start|>",
  "<|im_end|>",
  "<think>",
  "</think>",
  "<tool_call>",
  "</tool_call>",
  "<tool_response>",
  "</tool_response>",
  "<tools>",
  "</tools>",
] as const;

/** Media models' placeholders, right after the text specials: each stands for one image or audio feature row. */
export const MEDIA_TOKENS = ["<image>", "<|audio|>"] as const;

/** Learned merges are capped so the tokenizer (and its build time) stays the same for every large vocab. */
const MAX_LEARNED_TOKENS = 16384;

export interface TokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  /** Ids the model config and generation config need (media tokens only in media models). */
  ids: { endOfText: number; imStart: number; imEnd: number; image?: number; audio?: number };
}

type Special = (typeof SPECIAL_TOKENS)[number] | (typeof MEDIA_TOKENS)[number];

function specials(media: boolean): readonly Special[] {
  return media ? [...SPECIAL_TOKENS, ...MEDIA_TOKENS] : SPECIAL_TOKENS;
}

/** The id of special token `t` in a vocabulary of size `vocab` (with `media`, the two media tokens end the vocabulary). */
export function specialId(vocab: number, t: Special, media = false): number {
  const all = specials(media);
  if (!all.includes(t)) throw new Error(`specialId: ${t} is not a special token of this tokenizer`);
  return vocab - all.length + all.indexOf(t);
}

export function buildTokenizer(vocab: number, contextLength: number, media = false): TokenizerFiles {
  const SPECIALS = specials(media);
  const specialStart = vocab - SPECIALS.length;
  const { tokens, merges } = trainBpe(CORPUS, Math.min(MAX_LEARNED_TOKENS, specialStart - 256));
  const taken = new Set(tokens);
  // Placeholders are ordinary vocab entries of printable ASCII, so any sampled id decodes to visible text.
  // They are not added tokens: transformers.js scans added tokens linearly on every decode.
  for (let id = tokens.length, n = 0; id < specialStart; n++) {
    const t = `<|reserved_${n}|>`;
    if (taken.has(t)) continue;
    tokens.push(t);
    id++;
  }
  const vocabObj: Record<string, number> = {};
  tokens.forEach((t, i) => (vocabObj[t] = i));
  SPECIALS.forEach((t, i) => (vocabObj[t] = specialStart + i));

  const added = SPECIALS.map((content, i) => ({
    id: specialStart + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: true };
  const tokenizerJson = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    // No normalizer: any UTF-8 (combining marks included) must round-trip byte for byte.
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: vocabObj,
      merges,
    },
  };
  const addedDecoder: Record<string, unknown> = {};
  for (const a of added) {
    const { id, ...rest } = a;
    addedDecoder[String(id)] = rest;
  }
  const tokenizerConfig = {
    tokenizer_class: "PreTrainedTokenizerFast",
    add_bos_token: false,
    add_eos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: addedDecoder,
    additional_special_tokens: SPECIALS.slice(1),
    bos_token: null,
    eos_token: "<|endoftext|>",
    pad_token: "<|endoftext|>",
    unk_token: null,
    // Cleanup would rewrite " ." to "." and break exact round trips.
    clean_up_tokenization_spaces: false,
    errors: "replace",
    model_max_length: contextLength,
    padding_side: "left",
    split_special_tokens: false,
    chat_template: chatTemplate(media),
  };
  return {
    tokenizerJson,
    tokenizerConfig,
    ids: {
      endOfText: specialId(vocab, "<|endoftext|>", media),
      imStart: specialId(vocab, "<|im_start|>", media),
      imEnd: specialId(vocab, "<|im_end|>", media),
      ...(media ? { image: specialId(vocab, "<image>", true), audio: specialId(vocab, "<|audio|>", true) } : {}),
    },
  };
}
